"""Streams chapter: the pipeline against NumPy, the pinned-memory rule, the ideal model,
the Numba article's programs and bugs, and the checkers (with known-wrong solutions)."""

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import load_answer, solution
from numba import cuda  # noqa: I001  (after gpuperf: the mode is chosen first)

import gpuperf as gp
from gpuperf import exercises as ex
from gpuperf import records
from gpuperf.kernels import streams
from gpuperf.kernels.streams import checks, experiments

WRONG = Path(__file__).parent / "wrong" / "streams"
WRONG_FILES = sorted(WRONG.glob("*.py"))
# Correct answers written in unusual ways, which the checkers must accept.
RIGHT_FILES = sorted((Path(__file__).parent / "right" / "streams").glob("pipeline_*.py"))


def _pinned_inputs(n, seed):
    rng = np.random.default_rng(seed)
    a = streams.pinned_copy(ex.random_array(n, rng))
    b = streams.pinned_copy(ex.random_array(n, rng))
    out = cuda.pinned_array(n, dtype=np.float32)
    out[:] = np.nan
    return a, b, out


# --------------------------------------------------------------------------- chunk plan


@pytest.mark.parametrize("n,chunks,n_streams", [(1, 1, 1), (10, 3, 2), (10, 16, 4),
                                                 (1000, 7, 3), (257, 16, 5)])
def test_plan_covers_every_element_once(n, chunks, n_streams):
    plan = streams.plan_chunks(n, chunks, n_streams)
    assert plan[0].lo == 0 and plan[-1].hi == n
    assert all(p.hi == q.lo for p, q in itertools.pairwise(plan))
    sizes = [c.size for c in plan]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    assert len(plan) == min(chunks, n)
    assert [c.stream for c in plan] == [i % n_streams for i in range(len(plan))]


# --------------------------------------------------------------------------- the pipeline


@pytest.mark.parametrize("n,chunks,n_streams,iters", [(1, 1, 1, 0), (37, 5, 3, 0),
                                                       (100, 7, 4, 3), (10, 16, 4, 0),
                                                       (129, 4, 8, 40)])
def test_pipeline_matches_numpy(n, chunks, n_streams, iters):
    a, b, out = _pinned_inputs(n, seed=n + iters)
    got = streams.pipelined(a, b, out, iters=iters, n_streams=n_streams, n_chunks=chunks,
                            block=64)
    assert got is out
    np.testing.assert_allclose(out, streams.reference(a, b, iters), rtol=2e-6, atol=1e-6)


def test_relaxation_depends_on_both_inputs():
    # A few steps leave a visible trace of a; the fixed point is a + b.
    a, b, out = _pinned_inputs(64, seed=3)
    few = streams.pipelined(a, b, out, iters=2, n_chunks=2, n_streams=2, block=64).copy()
    assert not np.allclose(few, a + b, rtol=1e-3)
    np.testing.assert_allclose(streams.reference(a, b, 200), a.astype(np.float64) + b, rtol=1e-12)


def test_serial_matches_numpy_and_allocates_pinned_output():
    a, b, _ = _pinned_inputs(77, seed=5)
    out = streams.serial(a, b, iters=4, block=64)
    assert streams.is_pinned(out)
    np.testing.assert_allclose(out, streams.reference(a, b, 4), rtol=2e-6, atol=1e-6)


def test_pipeline_object_is_reusable():
    pipe = streams.Pipeline(50, n_streams=2, n_chunks=3, block=32)
    for seed in (1, 2):
        a, b, out = _pinned_inputs(50, seed)
        pipe.run(a, b, out)
        np.testing.assert_allclose(out, streams.reference(a, b), rtol=1e-6)


# --------------------------------------------------------------------------- pinned memory


def test_is_pinned_follows_the_memory_not_the_values():
    p = cuda.pinned_array(16, dtype=np.float32)
    p[:] = 1
    assert streams.is_pinned(p)
    assert streams.is_pinned(p[3:9])  # a view shares the page-locked buffer
    assert streams.is_pinned(p.reshape(4, 4))
    assert streams.is_pinned(cuda.pinned_array_like(np.zeros(3)))
    assert not streams.is_pinned(p + p)  # a new array, in ordinary memory
    assert not streams.is_pinned(p.copy())
    assert not streams.is_pinned(np.empty(16, np.float32))
    assert not streams.is_pinned([1.0, 2.0])


def test_pageable_pipeline_is_refused_when_asked():
    a, b, out = _pinned_inputs(20, seed=1)
    with pytest.raises(ValueError, match="pageable.*cuda.pinned_array.*pageable='warn'"):
        streams.pipelined(a.copy(), b, out, n_chunks=2, pageable="error")
    with pytest.raises(ValueError, match="out is in pageable"):
        streams.pipelined(a, b, np.empty(20, np.float32), n_chunks=2, pageable="error")


def test_pageable_pipeline_warns_by_default_and_stays_correct():
    # Pageable copies are slow and hold the host thread, but they are right: the default
    # runs them and says why the pipeline is slow (streams_pageable_overlap measures it).
    a, b, out = _pinned_inputs(20, seed=2)
    pa, pout = np.array(a), np.full(20, np.nan, np.float32)
    with pytest.warns(streams.PageableMemoryWarning,
                      match="a, out are in pageable.*holds the host thread until about the "
                            "whole copy is done.*pageable='allow'"):
        streams.pipelined(pa, b, pout, n_chunks=3, n_streams=2, block=32)
    np.testing.assert_allclose(pout, streams.reference(a, b), rtol=1e-6)
    with pytest.warns(streams.PageableMemoryWarning):
        streams.pipelined(pa, b, pout, n_chunks=3, n_streams=2, pageable="warn", block=32)


def test_pageable_allowed_silently_when_measured_on_purpose():
    a, b, _ = _pinned_inputs(20, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = streams.pipelined(np.array(a), np.array(b), np.empty(20, np.float32), n_chunks=2,
                                pageable="allow", block=32)
    np.testing.assert_allclose(out, streams.reference(a, b), rtol=1e-6)


def test_bad_inputs_say_how_to_fix_them():
    a, b, out = _pinned_inputs(8, seed=6)
    with pytest.raises(TypeError, match="astype"):
        streams.pipelined(a.astype(np.float64), b, out)
    with pytest.raises(ValueError, match="same shape"):
        streams.pipelined(a, b[:4], out)
    with pytest.raises(TypeError, match="device array"):
        streams.pipelined(cuda.to_device(a), b, out)
    with pytest.raises(ValueError, match="n_streams"):
        streams.pipelined(a, b, out, n_streams=0)
    with pytest.raises(ValueError, match="n_chunks"):
        streams.pipelined(a, b, out, n_chunks=0)
    with pytest.raises(ValueError, match="iters"):
        streams.pipelined(a, b, out, iters=-1)
    with pytest.raises(ValueError, match="multiple of 32"):
        streams.pipelined(a, b, out, block=100)
    with pytest.raises(ValueError, match="pageable="):
        streams.pipelined(a, b, out, pageable="maybe")
    with pytest.raises(TypeError, match="NumPy array"):
        streams.pipelined(list(a), b, out)
    with pytest.raises(ValueError, match="built for 8"):
        streams.Pipeline(8).run(*_pinned_inputs(9, 1))


# --------------------------------------------------------------------------- the ideal


def test_ideal_with_one_stream_is_the_serial_sum():
    h, k, d = [0.7, 0.3, 0.9], [0.4, 1.2, 0.1], [0.5, 0.5, 0.5]
    assert streams.ideal_ms(h, k, d, 1) == pytest.approx(sum(h + k + d))


def test_ideal_with_equal_chunks_is_the_textbook_formula():
    for th, tk, td, chunks in [(1.0, 0.5, 1.0, 4), (0.1, 1.5, 0.1, 8), (0.3, 0.3, 0.9, 5)]:
        want = th + tk + td + (chunks - 1) * max(th, tk, td)
        got = streams.ideal_ms([th] * chunks, [tk] * chunks, [td] * chunks, chunks)
        assert got == pytest.approx(want)


def test_two_streams_cannot_hide_both_copies():
    # With two streams, chunk i's copy in waits for chunk i-2's copy out.
    h = d = [1.0] * 6
    k = [0.3] * 6
    assert streams.ideal_ms(h, k, d, 2) > streams.ideal_ms(h, k, d, 3) + 0.5


@pytest.mark.parametrize("seed", range(8))
def test_ideal_schedule_obeys_engines_and_streams(seed):
    rng = np.random.default_rng(seed)
    chunks = int(rng.integers(1, 12))
    h, k, d = (list(rng.uniform(0.05, 2, chunks)) for _ in range(3))
    n_streams = int(rng.integers(1, 6))
    spans = streams.ideal_schedule(h, k, d, n_streams)
    total = max(s["end_ms"] for s in spans)
    assert streams.overlap_bound_ms(h, k, d) - 1e-9 <= total <= sum(h + k + d) + 1e-9
    for kind in streams.KINDS:  # one engine per kind: its spans never overlap
        mine = sorted((s for s in spans if s["kind"] == kind), key=lambda s: s["start_ms"])
        assert all(p["end_ms"] <= q["start_ms"] + 1e-9 for p, q in itertools.pairwise(mine))
    for st in range(n_streams):  # in a stream, everything runs in order
        mine = [s for s in spans if s["stream"] == st]
        assert all(p["end_ms"] <= q["start_ms"] + 1e-9 for p, q in itertools.pairwise(mine))
    more = streams.ideal_ms(h, k, d, n_streams + 1)
    assert more <= total + 1e-9  # a stream more never makes the ideal slower


def test_stage_lists_are_validated():
    with pytest.raises(ValueError, match="same"):
        streams.ideal_ms([1.0], [1.0, 2.0], [1.0], 1)
    with pytest.raises(ValueError, match="negative"):
        streams.ideal_ms([1.0], [-1.0], [1.0], 1)


def test_run_stage_times_read_the_spans():
    spans = streams.ideal_schedule([1.0, 2.0], [0.5, 0.5], [0.25, 0.75], 1)
    run = streams.Run(10, 0, 1, 2, 5.0, [5.0], spans)
    assert run.stage_times() == {"h2d": [1.0, 2.0], "kernel": [0.5, 0.5], "d2h": [0.25, 0.75]}


# --------------------------------------------------------------------------- the Numba article


def test_article_programs_and_the_shared_buffer_bug():
    n = 53  # not a multiple of 5: the article's segments drop the last 3 elements
    rng = np.random.default_rng(9)
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    y = rng.integers(-1000, 1000, n, dtype=np.int32)
    ref = x.astype(np.float64) + y
    np.testing.assert_array_equal(streams.article_default_stream(streams.article_add, x, y), ref)
    seg = n // 5 * 5
    five = streams.article_five_streams(streams.article_add, x, y)
    np.testing.assert_array_equal(five[:seg], ref[:seg])  # the simulator runs it in order
    px, py = streams.pinned_copy(x), streams.pinned_copy(y)
    out = cuda.pinned_array(n, np.float64)
    out[:] = np.nan
    streams.shared_buffer_pipeline(px, py, out, breadth_first=True)
    assert np.count_nonzero(out[:seg] != ref[:seg]) > seg // 2  # every copy reads the last kernel
    out[:] = np.nan
    np.testing.assert_array_equal(streams.fixed_five_streams(px, py, out), ref)


# --------------------------------------------------------------------------- checkers


def my_pipeline(a, b, out, n_streams, n_chunks):
    """The chapter's own answer, run from solutions/07_streams.ipynb."""
    return solution("07_streams", "ex-streams-bounded")["my_pipeline"](a, b, out, n_streams,
                                                                         n_chunks)


def my_predict(h2d_ms, kernel_ms, d2h_ms, n_streams):
    done = {"h": [], "k": [], "d": []}
    for i, (th, tk, td) in enumerate(zip(h2d_ms, kernel_ms, d2h_ms)):
        free = done["d"][i - n_streams] if i >= n_streams else 0.0
        h = max(done["h"][-1] if i else 0.0, free) + th
        k = max(done["k"][-1] if i else 0.0, h) + tk
        d = max(done["d"][-1] if i else 0.0, k) + td
        for key, v in zip("hkd", (h, k, d)):
            done[key].append(v)
    return done["d"][-1]


def test_check_pipeline_accepts_a_correct_pipeline(capsys):
    report = streams.check_pipeline(my_pipeline)
    assert report, report.text()
    assert "\u2713" in capsys.readouterr().out


def test_the_chapters_pipeline_is_not_an_answer(course_code_as_answer, capsys):
    """The chapter prints its pipeline; the exercise asks for one it cannot be: device
    memory for one chunk per stream, where pipelined() holds whole arrays."""
    def packaged(a, b, out, n_streams, n_chunks):
        streams.pipelined(a, b, out, n_streams=n_streams, n_chunks=n_chunks, block=64)
        cuda.synchronize()

    assert not streams.check_pipeline(packaged)
    assert "bytes of device memory were allocated" in capsys.readouterr().out


def test_the_memory_bound_is_one_chunk_per_stream():
    assert streams.pipeline_memory_bound(1000, 7, 3) == 3 * 3 * 143 * 4
    assert streams.pipeline_memory_bound(5, 8, 3) == 3 * 3 * 1 * 4


def test_unordered_sharing_sees_a_wait_that_orders_it():
    s1, s2 = cuda.stream(), cuda.stream()
    host = streams.pinned_copy(np.ones(8, dtype=np.float32))
    buf = cuda.device_array(8, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        buf.copy_to_device(host, stream=s1)
        buf.copy_to_host(host, stream=s2)
    assert watch.unordered_sharing() == ("a copy in", "a copy back", (0, 1))
    with checks._HostCopyWatch() as watch:
        buf.copy_to_device(host, stream=s1)
        s1.synchronize()
        buf.copy_to_host(host, stream=s2)
        buf[:4].copy_to_host(host[:4], stream=s1)  # two reads: no conflict
    assert watch.unordered_sharing() is None
    with checks._HostCopyWatch() as watch:
        buf[:4].copy_to_device(host[:4], stream=s1)
        buf[4:].copy_to_device(host[4:], stream=s2)  # disjoint bytes
        streams.add_kernel[1, 8, s2](buf[:4], buf[:4], cuda.device_array(4, np.float32))
    assert watch.unordered_sharing() == ("a copy in", "a kernel", (0, 1))
    assert watch.allocated == 16


def test_unordered_sharing_follows_chains_of_event_waits():
    """s1 writes, s2 waits for s1, s3 waits for s2: s3's read is ordered after s1's write
    transitively; without the middle wait it is not."""
    host = streams.pinned_copy(np.ones(8, dtype=np.float32))
    buf = cuda.device_array(8, dtype=np.float32)
    for chained in (True, False):
        s1, s2, s3 = cuda.stream(), cuda.stream(), cuda.stream()
        with checks._HostCopyWatch() as watch:
            buf.copy_to_device(host, stream=s1)
            first, second = cuda.event(), cuda.event()
            first.record(s1)
            if chained:
                first.wait(s2)
            second.record(s2)
            second.wait(s3)
            buf.copy_to_host(host, stream=s3)
        want = None if chained else ("a copy in", "a copy back", (0, 1))
        assert watch.unordered_sharing() == want, chained


def test_a_lazy_watch_runs_stream_work_only_when_waited_for():
    """In the simulator a lazy watch runs a stream's work as late as the waits allow, as a GPU
    may: the copy in reads the host buffer when it runs, and the copy back lands when waited
    for."""
    s = cuda.stream()
    host = streams.pinned_copy(np.full(4, 1.0, dtype=np.float32))
    back = streams.pinned_copy(np.zeros(4, dtype=np.float32))
    d = cuda.device_array(4, dtype=np.float32)
    with checks._HostCopyWatch(lazy=True) as watch:
        d.copy_to_device(host, stream=s)
        host[:] = 2.0  # before the copy has run
        d.copy_to_host(back, stream=s)
        assert (back == 0).all()  # not landed yet
        s.synchronize()
        assert (back == 2).all()
        d.copy_to_device(host, stream=0)  # the legacy default stream runs at once
    assert watch.unwaited_streams() == 0


def test_a_slice_assignment_is_a_copy_on_the_default_stream():
    d = cuda.device_array(4, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        d[:] = np.arange(4, dtype=np.float32)
    assert (watch.copies, watch.no_stream) == (1, 1)
    assert (d.copy_to_host() == np.arange(4)).all()


def test_the_default_streams_are_told_apart():
    key = checks._HostCopyWatch._key
    assert key(cuda.default_stream()) is None and key(cuda.legacy_default_stream()) is None
    assert key(cuda.per_thread_default_stream()) == key(cuda.per_thread_default_stream())
    assert key(cuda.per_thread_default_stream()) is not None
    assert key(cuda.stream()) not in (None, key(cuda.per_thread_default_stream()))


def test_chunked_ideal_reduces_to_the_ideal_and_waits_for_the_host():
    assert streams.chunked_ideal_ms(4.0, 1.0, 2.0, 4, 2) == streams.ideal_ms([1.0] * 4, [0.25] * 4,
                                                                            [0.5] * 4, 2)
    # a host slower than every engine: the last chunk is issued at 8 x 1 ms, then its stages
    assert streams.chunked_ideal_ms(0.8, 0.8, 0.8, 8, 4, 1.0) == pytest.approx(8.0 + 0.3)
    assert streams.issued_ideal_ms([1.0], [1.0], [1.0], 1, issue_ms=0.5) == 3.5
    assert streams.issued_ideal_ms([1.0, 2.0], [0.5, 0.1], [1.0, 1.0], 2, 0.0) == \
        streams.ideal_ms([1.0, 2.0], [0.5, 0.1], [1.0, 1.0], 2)


def test_check_chunks_accepts_the_chapters_model():
    assert streams.check_chunks(solution("07_streams", "ex-streams-chunks")["chunked_ms"])


def test_check_predict_accepts_a_correct_model():
    assert streams.check_predict(my_predict)


def test_copy_watch_restores_numba():
    cls = type(cuda.device_array(1, dtype=np.float32))
    kernel_cls = type(streams.add_kernel)

    patched = [(cls, "copy_to_host"), (cls, "copy_to_device"), (cls, "__init__"),
               (cls, "__setitem__"),
               (kernel_cls, "__getitem__"), (type(cuda.stream()), "synchronize"),
               (type(cuda.current_context()), "synchronize"),
               (type(cuda.current_context()), "memalloc")]
    patched += [(type(cuda.event()), name) for name in ("record", "synchronize", "wait")]

    def state():
        return ([c.__dict__.get(name) for c, name in patched]
                + [cuda.to_device, cuda.synchronize, cuda.device_array])

    before = state()
    with checks._HostCopyWatch():
        pass
    assert before == state()


# Why each wrong pipeline fails: its own mistake, not another the file makes on the way.
PIPELINE_REASONS = {
    "alloc_per_chunk": "bytes of device memory were allocated",
    "compute_stream_unordered": "a copy in (stream 0) and a kernel (stream 1)",
    "default_stream": "copies had no stream=",
    "default_stream_objects": "kernel launches named no stream",
    "per_thread_default": "the copies went to 1 stream(s)",
    "pinned_staging_host_race": "run as late as your waits allow",
    "pinned_staging_read_early": "run as late as your waits allow",
    "setitem_copy_in": "a slice assignment",
    "device_array_imported": "bytes of device memory were allocated",
    "full_size_buffers": "bytes of device memory were allocated",
    "host_add": "0 kernel launch(es)",
    "kernel_on_default_stream": "kernel launches named no stream",
    "no_wait": "returned without waiting",
    "one_output_buffer": "a kernel (stream 0) and a kernel (stream 1)",
    "one_stream": "the copies went to 1 stream(s)",
    "own_kernel_one_output": "a kernel (stream 0) and a kernel (stream 1)",
    "pageable_copy_back": "pageable host memory",
    "returns_another_array": "out, the pinned array passed in, does not",
    "shared_buffer": "element(s) are wrong",
    "staged_inputs": "bytes of device memory were allocated",
    "stream_sync_each_chunk": "wait(s) inside the loop",
    "sync_in_loop": "wait(s) inside the loop",
    "tail_dropped": "are NaN",
    "two_buffer_sets": "use the same device bytes",
    "whole_copies": "bytes of device memory were allocated",
    "one_block_per_chunk": "a block has at most 1024 threads",
}


@pytest.mark.parametrize("path", WRONG_FILES, ids=[p.stem for p in WRONG_FILES])
def test_checker_rejects_known_wrong_solution(path, capsys):
    mod = load_answer(path)
    report = getattr(streams, mod.CHECKER)(mod.student)
    assert not report, f"{path.name} passed {mod.CHECKER}"
    text = capsys.readouterr().out
    assert "Traceback" not in text
    if mod.CHECKER == "check_pipeline":
        assert PIPELINE_REASONS[path.stem.removeprefix("pipeline_")] in text, text


@pytest.mark.parametrize("path", RIGHT_FILES, ids=[p.stem for p in RIGHT_FILES])
def test_checker_accepts_unusual_correct_solution(path, capsys):
    mod = load_answer(path)
    report = getattr(streams, mod.CHECKER)(mod.student)
    assert report, capsys.readouterr().out


def test_wrong_folder_covers_every_exercise():
    checkers = {load_answer(p).CHECKER for p in WRONG_FILES}
    assert checkers == {"check_pipeline", "check_predict", "check_chunks"}
    assert len(WRONG_FILES) >= 8


# --------------------------------------------------------------------------- registry


def test_experiments_are_registered_with_the_chapter_prefix():
    names = [n for n, e in records.experiments().items() if e.chapter == "streams"]
    assert sorted(names) == sorted(["streams_article", "streams_host_bandwidth",
                                    "streams_pipeline", "streams_timeline", "streams_default_stream",
                                    "streams_explore", "streams_pinned_and_streams",
                                    "streams_pageable_overlap", "streams_copy_overhead",
                                    "streams_sync_calls", "streams_memory_kinds",
                                    "streams_launch_cost", "streams_hardware_queues",
                                    "streams_chunking", "streams_same_direction"])


def test_the_driver_path_leaves_the_other_experiments_code_alone():
    # IssuePipeline is a subclass in its own module, so that the experiments that use the
    # plain Pipeline keep the code fingerprint their records were made with.
    import inspect

    from gpuperf.kernels.streams import pipeline
    src = inspect.getsource(pipeline)
    assert "issue" not in src.replace("issued", "").replace("issues", "")


def test_measuring_needs_a_gpu():
    a, b, out = _pinned_inputs(8, seed=1)
    with pytest.raises(gp.bench.NeedsGPU):
        streams.Pipeline(8).time(a, b, out)


def test_ptx_targets_listed():
    names = {k.py_func.__name__ for k, _ in streams.PTX_TARGETS}
    assert names == {"add_kernel", "relax_kernel", "article_add", "bump"}  # bump: launch.py's


def test_article_program_runs_as_a_standalone_script():
    # The experiment runs the article's program in a new process (so the CUDA context is created inside
    # the timed region); here the new process inherits the simulator.
    messages = []
    rows = experiments._fresh_process_rows(messages.append, n=40)
    assert [r["variant"] for r in rows] == ["article: default stream",
                                             "article: 5 streams (pageable, shared output buffer)"]
    assert all(r["ms"] > 0 for r in rows), messages


def test_figures_draw_from_result_rows():
    # Figures are drawn from rows shaped like the experiments' (here made by the model).
    import matplotlib

    matplotlib.use("Agg")
    spans = streams.ideal_schedule([1.0] * 3, [0.5] * 3, [0.8] * 3, 2)
    rows = [{"case": "pipelined", "work": "w", "iters": 0, "schedule": sched, "host": "pinned",
             "n_streams": 2, "n_chunks": 3, **s} for sched in ("measured", "ideal") for s in spans]
    res = records.Result("streams_timeline", rows, {"gpu": "test"}, "recorded")
    fig = streams.plot_timeline(res, "w")
    assert fig.axes and "ideal" in fig.axes[0].get_title()
    assert streams.timeline_spans(res, "w", "pipelined", "ideal") == spans


def test_check_pipeline_accepts_reused_per_stream_buffers():
    """Correct but unusual: one set of buffers per stream, reused after waiting on that
    stream (not the one just used), and chunks of ceil(n / n_chunks) elements."""

    def reuse(a, b, out, n_streams, n_chunks):
        n = a.size
        size = -(-n // n_chunks)
        queues = [cuda.stream() for _ in range(n_streams)]
        bufs = [tuple(cuda.device_array(size, dtype=np.float32) for _ in range(3))
                for _ in range(n_streams)]
        for i, lo in enumerate(range(0, n, size)):
            hi = min(lo + size, n)
            k = i % n_streams
            s = queues[k]
            if i >= n_streams:
                s.synchronize()  # this stream's buffers are free again
            d_a, d_b, d_out = (d[: hi - lo] for d in bufs[k])
            d_a.copy_to_device(a[lo:hi], stream=s)
            d_b.copy_to_device(b[lo:hi], stream=s)
            streams.add_kernel[4, 64, s](d_a, d_b, d_out)
            d_out.copy_to_host(out[lo:hi], stream=s)
        for s in queues:
            s.synchronize()
        return out

    assert streams.check_pipeline(reuse)


def test_copy_watch_logs_waits_and_streams():
    s1, s2 = cuda.stream(), cuda.stream()
    host = streams.pinned_copy(np.ones(8, dtype=np.float32))
    d = cuda.device_array(8, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        d.copy_to_device(host, stream=s1)
        s2.synchronize()  # another stream: not serializing
        d.copy_to_device(host, stream=s2)
        s2.synchronize()  # the stream that just got work, with more copies after: serializing
        d.copy_to_host(host, stream=s1)
        cuda.synchronize()  # the final wait: fine
    assert watch.streams_used() == 2
    assert watch.serializing_waits() == 1
    assert [e[0] for e in watch.log] == ["in", "wait", "in", "wait", "out", "wait"]


def test_copy_watch_sees_every_kind_of_wait():
    """Events, the context and auto_synchronize wait too; an event waits only for the work
    issued before it was recorded, and event.wait(stream) orders two streams on the device."""
    s1, s2 = cuda.stream(), cuda.stream()
    host = streams.pinned_copy(np.ones(8, dtype=np.float32))
    d = cuda.device_array(8, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        d.copy_to_device(host, stream=s1)
        early = cuda.event()
        early.record(s1)
        d.copy_to_host(host, stream=s1)
        early.synchronize()  # before the copy back: s1 is not waited for
    assert watch.unwaited_streams() == 1
    for wait in (lambda: cuda.current_context().synchronize(), lambda: cuda.synchronize(),
                 lambda: s1.synchronize()):
        with checks._HostCopyWatch() as watch:
            d.copy_to_device(host, stream=s1)
            wait()
        assert watch.unwaited_streams() == 0
    with checks._HostCopyWatch() as watch:
        with s1.auto_synchronize():
            d.copy_to_device(host, stream=s1)
    assert watch.unwaited_streams() == 0
    with checks._HostCopyWatch() as watch:
        d.copy_to_device(host, stream=s1)
        ready = cuda.event()
        ready.record(s1)
        ready.wait(s2)  # s2's later work waits for the copy in
        d.copy_to_host(host, stream=s2)
        d.copy_to_device(host, stream=s1)  # but nothing orders this write after s2's read
    assert watch.unordered_sharing() == ("a copy back", "a copy in", (1, 0))


def test_copy_watch_counts_allocations_however_named():
    from numba.cuda import device_array, device_array_like, to_device

    host = np.ones(10, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        first = device_array(10, dtype=np.float32)
        device_array_like(first)
        to_device(host)
        first[2:5].copy_to_device(host[:3])  # a view: no new memory
        first.bind(cuda.stream())
    assert watch.allocated == 3 * 40


def test_copy_watch_reads_what_a_kernel_writes_from_its_source():
    s1, s2 = cuda.stream(), cuda.stream()
    x, y = cuda.device_array(8, dtype=np.float32), cuda.device_array(8, dtype=np.float32)
    with checks._HostCopyWatch() as watch:
        streams.add_kernel[1, 8, s1](x, x, y)
        streams.add_kernel[1, 8, s2](x, x, cuda.device_array(8, dtype=np.float32))
    assert watch.unordered_sharing() is None  # both only read x
    assert watch.launches == 2 and watch.launches_no_stream == 0


def test_timeline_figure_keeps_its_suptitle_for_tight_layout():
    """Removing the panels' labels after the suptitle detached it; matplotlib 3.10 (Colab's)
    then failed in tight_layout with 'NoneType' object has no attribute 'dpi'."""
    import matplotlib.pyplot as plt

    tl = records.run("streams_timeline", live=False)
    fig = streams.plot_timeline(tl, tl.values("work")[0])
    assert fig._suptitle is not None and fig._suptitle in fig.texts
    assert sum(t is not fig._suptitle for t in fig.texts) == 1  # one source label
    plt.close(fig)


def _timeline(spans):
    rows = [{"case": "c", "work": "w", "iters": 0, "schedule": "measured", "host": "pinned",
             "n_streams": 2, "n_chunks": len(spans), "stream": s, "kind": k, "start_ms": a,
             "end_ms": b, "label": k, "chunk": i} for i, (s, k, a, b) in enumerate(spans)]
    return records.Result("streams_timeline", rows, {"gpu": "test"}, "recorded")


def test_busy_ms_counts_overlapping_spans_once():
    res = _timeline([(0, "kernel", 0.0, 2.0), (1, "kernel", 1.0, 3.0), (0, "kernel", 5.0, 6.0),
                     (1, "h2d", 0.0, 10.0), (1, "kernel", 5.5, 5.75)])
    assert streams.busy_ms(res, "w", "c") == pytest.approx(4.0)
    assert streams.busy_ms(res, "w", "c", "h2d") == pytest.approx(10.0)
    assert streams.busy_ms(res, "w", "c", "d2h") == 0.0
    with pytest.raises(ValueError, match="kind"):
        streams.busy_ms(res, "w", "c", "copy")


@pytest.mark.parametrize("path", records.available(), ids=lambda p: p.stem)
def test_recorded_pipelined_kernels_overlap_and_beat_the_one_at_a_time_model(path):
    # What the chapter says of every shipped record: the compute-bound pipeline beats the ideal
    # built from its stage times, and its kernels were in flight for less time in all than one
    # at a time (their spans overlap).
    tl = records.recorded("streams_timeline", path=path)
    pipe = records.recorded("streams_pipeline", path=path)
    work = next(w for w in tl.values("work") if w.startswith("compute"))
    assert max(r["pct_of_ideal"] for r in pipe.select(work=work)) > 100
    spans = [s for s in streams.timeline_spans(tl, work, "pipelined") if s["kind"] == "kernel"]
    assert sum(s["end_ms"] - s["start_ms"] for s in spans) > streams.busy_ms(tl, work, "pipelined")
    assert streams.busy_ms(tl, work, "pipelined") < streams.busy_ms(tl, work, "one stream, chunked")


@pytest.mark.parametrize("path", records.available(), ids=lambda p: p.stem)
def test_article_summary_reads_the_records(path, capsys):
    article = records.recorded("streams_article", path=path)
    s = streams.article_summary(article)
    assert s["context_ms"] > 0 and s["new_process_ms"] > s["warm_first_call_ms"]
    # the fixed program is many times faster than the article's five streams (the chapter)
    assert s["five_events_ms"] / s["fixed_pinned_ms"] > 5
    streams.show_article_summary(article)
    out = capsys.readouterr().out
    assert f"{s['context_ms']:.0f} ms" in out and f"{s['fixed_pinned_ms']:.2f} ms" in out
    assert article.gpu in out


def test_article_summary_needs_every_row():
    article = records.recorded("streams_article")
    with pytest.raises(ValueError, match="expected one row"):
        streams.article_summary(records.Result(article.name, article.rows[:1], article.meta,
                                               "recorded"))


def test_article_summary_without_the_new_process_run(capsys):
    # A live run whose new-process script failed has no such row; the summary says so.
    article = records.recorded("streams_article")
    rows = [r for r in article.rows if not r["timing"].startswith("wall clock, new process")]
    short = records.Result(article.name, rows, article.meta, "recorded")
    assert streams.article_summary(short)["context_ms"] is None
    streams.show_article_summary(short)
    assert "missing from this result" in capsys.readouterr().out


def _paths_with(name):
    return [p for p in records.available() if name in records.load(p)["experiments"]]


@pytest.mark.parametrize("path", _paths_with("streams_pinned_and_streams"), ids=lambda p: p.stem)
def test_pinned_memory_gives_most_and_streams_need_it(path, capsys):
    # What the chapter says of the record: pinned memory alone gives more than five streams
    # give on top of it; on pageable memory the streams give nothing; every run was right.
    res = records.recorded("streams_pinned_and_streams", path=path)
    assert all(r["wrong_elements"] == 0 for r in res.rows)
    s = streams.pinned_and_streams_summary(res)
    assert s["pinned_x"] > s["streams_on_pinned_x"] > 1
    assert s["streams_x"] < 1.05
    assert s["both_x"] == pytest.approx(s["pinned_x"] * s["streams_on_pinned_x"])
    if s["article_serial_ms"] is not None:  # the output allocated on every call costs time
        assert s["output_once_x"] > 1
    streams.show_pinned_and_streams(res)
    out = capsys.readouterr().out
    assert f"{s['pinned_x']:.2f}x" in out and f"{s['streams_on_pinned_x']:.2f}x" in out


def test_pinned_and_streams_summary_arithmetic():
    rows = [{"host_memory": m, "n_streams": k, "ms": ms, "wrong_elements": 0}
            for m, k, ms in [("pageable", 1, 30.0), ("pinned", 1, 6.0), ("pageable", 4, 32.0),
                             ("pinned", 4, 4.0)]]
    s = streams.pinned_and_streams_summary(records.Result("streams_pinned_and_streams", rows,
                                                          {"gpu": "X"}, "recorded"))
    assert s["n_streams"] == 4
    assert (s["pinned_x"], s["streams_x"], s["both_x"], s["streams_on_pinned_x"]) == \
        pytest.approx((5.0, 30 / 32, 7.5, 1.5))
    assert s["article_serial_ms"] is None and s["output_once_x"] is None  # an older record
    article = {"host_memory": "pageable", "output": "new array per call (the article's)",
               "n_streams": 1, "ms": 75.0, "wrong_elements": 0}
    once = [{**r, "output": "allocated once"} for r in rows]
    s = streams.pinned_and_streams_summary(records.Result(
        "streams_pinned_and_streams", [article] + once, {"gpu": "X"}, "recorded"))
    assert s["article_serial_ms"] == 75.0 and s["output_once_x"] == pytest.approx(2.5)
    assert s["pinned_x"] == pytest.approx(5.0)  # still against the output allocated once
    with pytest.raises(ValueError, match="expected one"):
        streams.pinned_and_streams_summary(records.Result("streams_pinned_and_streams",
                                                          rows[:3], {"gpu": "X"}, "recorded"))


@pytest.mark.parametrize("path", _paths_with("streams_pageable_overlap"), ids=lambda p: p.stem)
def test_recorded_pageable_copies_hold_the_host_and_hide_only_behind_a_running_kernel(path,
                                                                                     capsys):
    # What the chapter says of the record.
    res = records.recorded("streams_pageable_overlap", path=path)
    s = streams.pageable_overlap_summary(res)
    # the table shows hidden shares above 100 as 100, and names them below it
    over = [v for m in ("pageable", "pinned") for k, v in s[m].items()
            if k.endswith("_pct") and "held" not in k and round(v) > 100]
    streams.show_pageable_overlap(res)
    out = capsys.readouterr().out
    assert res.gpu in out
    assert ("Shown as 100" in out) == bool(over)
    assert all(f"{v:.0f}%" in out for v in over)
    page, pin = s["pageable"], s["pinned"]
    for d in ("in", "out"):
        assert page[f"{d}_held_pct"] > 90 and pin[f"{d}_held_pct"] < 10  # the call holds the host
        assert page[f"{d}_ms"] > 2 * pin[f"{d}_ms"]                     # several times slower
        assert page[f"{d}_after_kernel_pct"] > 80                      # hides behind a kernel
        assert page[f"{d}_before_kernel_pct"] < 50                     # delays the kernel
        assert pin[f"{d}_after_kernel_pct"] > 90 and pin[f"{d}_before_kernel_pct"] > 90
    # together: pageable, the copy in holds the thread, so little or nothing is hidden (28% on
    # one H100 host, -4% on another, -8% on the H200); pinned, they overlap, not fully
    assert page["in_with_out_pct"] < 50 and 0 < pin["in_with_out_pct"] < 95


def test_pageable_overlap_summary_arithmetic_and_refusals():
    def row(memory, first, second, first_ms, second_ms, makespan, held):
        hidden = None if second is None else 100 * (first_ms + second_ms - makespan) / min(
            first_ms, second_ms)
        return {"memory": memory, "first": first, "second": second, "first_ms": first_ms,
                "second_ms": second_ms, "makespan_ms": makespan, "host_blocked_ms": held,
                "hidden_pct": hidden, "spread": 0.0}

    cin, cout, k = "copy in (8 MiB)", "copy out (8 MiB)", "kernel"
    rows = []
    for m, t in (("pageable", 10.0), ("pinned", 2.0)):
        rows += [row(m, cin, None, t, None, t, t / 2), row(m, k, cin, 10.0, t, 10.0, 0.1),
                 row(m, cin, k, t, 10.0, 10.0 + t, t), row(m, cout, None, t, None, t, t / 4),
                 row(m, k, cout, 10.0, t, 10.0 + t / 2, 0.1), row(m, cout, k, t, 10.0, 10.0 + t, t),
                 row(m, cin, cout, t, t, 1.5 * t, t)]
    s = streams.pageable_overlap_summary(records.Result("streams_pageable_overlap", rows,
                                                        {"gpu": "X"}, "recorded"))
    assert s["kernel_ms"] == 10.0
    assert s["pageable"]["in_held_pct"] == pytest.approx(50)
    assert s["pinned"]["out_held_pct"] == pytest.approx(25)
    assert s["pageable"]["in_after_kernel_pct"] == pytest.approx(100)
    assert s["pageable"]["in_before_kernel_pct"] == pytest.approx(0)
    assert s["pinned"]["out_after_kernel_pct"] == pytest.approx(50)
    assert s["pinned"]["in_with_out_pct"] == pytest.approx(50)
    with pytest.raises(ValueError, match="one copy in and one copy out"):
        streams.pageable_overlap_summary(records.Result(
            "streams_pageable_overlap", [r for r in rows if r["first"] != cout], {"gpu": "X"},
            "recorded"))
    with pytest.raises(ValueError, match="res column"):
        streams.pageable_overlap_summary(records.recorded("streams_article"))


@pytest.mark.parametrize("path", _paths_with("streams_copy_overhead"), ids=lambda p: p.stem)
def test_recorded_small_copies_cost_numba_host_time(path, capsys):
    # What the chapter says of the record: Numba's host work is most of a small copy's cost,
    # and the stream waits for it; the 256 MiB copy stays below the PCIe link's theory.
    res = records.recorded("streams_copy_overhead", path=path)
    rows = streams.copy_overhead_summary(res)
    assert [r["kib"] for r in rows] == sorted(streams.OVERHEAD_KIB)
    for r in rows:
        assert r["numba_host_us"] > 5 * r["driver_host_us"]
        assert r["numba_stream_us"] == pytest.approx(r["numba_host_us"], rel=0.2)
        assert r["driver_host_us"] < 20
    link = res.rows[0]
    if link.get("pcie_gbps"):
        assert 0.5 * link["pcie_gbps"] < link["link_gbps"] < link["pcie_gbps"]
    streams.show_copy_overhead(res)
    out = capsys.readouterr().out
    assert f"{link['link_gbps']:.1f} GB/s" in out


def test_pcie_theory():
    # 16 lanes at 32 GT/s with 128b/130b encoding: about 63 GB/s per direction
    assert streams.PCIE_GT_PER_LANE[5] * 16 * 128 / 130 / 8 == pytest.approx(63.0, abs=0.05)


def test_sync_calls_verdicts_and_the_note(capsys):
    def row(call, host, idle, waited):
        return {"call": call, "host_ms": host, "idle_ms": idle, "kernel_ms": 200.0,
                "waited": waited, "tries": 5, "mib": 1}

    rows = [row("cuda.synchronize()", 199.0, 0.01, 5),
            row("d[:] = 0: fill a device array", 180.0, 0.05, 5),
            row("a kernel launch with no stream", 0.01, 0.01, 0),
            row("cuda.device_array: allocate", 3.0, 3.0, 2),
            # finished first, but as slow without the kernel: slow, not waiting
            row("cuda.pinned_array: allocate pinned host memory", 230.0, 225.0, 5)]
    res = records.Result("streams_sync_calls", rows, {"gpu": "X"}, "recorded")
    out = streams.show_sync_calls(res)
    assert [r["verdict"] for r in out] == ["waits for the kernel", "waits for the kernel",
                                           "returns at once", "varies",
                                           "slow, but does not wait"]
    assert out[0]["extra_pct"] == pytest.approx(99.495)
    note = capsys.readouterr().out.splitlines()[-1]
    assert "every time: cuda.synchronize(); d[:] = 0. " in note  # the call's name whole
    # "varies" is defined where a row has that verdict
    assert note.endswith("varies: the kernel had finished by the call's return in some tries "
                         "and not in others.")
    # A record made before idle_ms cannot tell waiting from slowness, and says so.
    old = records.Result("streams_sync_calls", [{k: v for k, v in rows[0].items()
                                                 if k != "idle_ms"}], {"gpu": "X"}, "recorded")
    assert streams.sync_calls_summary(old)[0]["verdict"].startswith("finished first")
    with pytest.raises(ValueError, match="res column"):
        streams.sync_calls_summary(records.recorded("streams_pipeline"))


def test_driver_issue_falls_back_to_numba_in_the_simulator_and_stays_correct():
    a, b, out = _pinned_inputs(1001, seed=3)
    pipe = streams.IssuePipeline(1001, n_streams=3, n_chunks=7, block=64, issue="driver")
    assert not pipe.driver_path  # no driver here: the runs issue through Numba
    pipe.run(a, b, out)
    assert ex.compare(out, streams.reference(a, b, 0)) is None
    assert len(pipe.issue_times_ms) == 1 and pipe.issue_times_ms[0] > 0
    with pytest.raises(ValueError, match="issue"):
        streams.IssuePipeline(8, issue="cupy")


def _chunking_rows():
    rows = []
    for c in (1, 4, 16, 64):
        for issue, per_chunk_ms in (("numba", 0.3), ("driver", 0.02)):
            issue_ms = per_chunk_ms * c
            rows.append({"issue": issue, "n_chunks": c, "n_streams": 4,
                         "total_ms": max(3.0 - 0.1 * c ** 0.5, issue_ms), "issue_ms": issue_ms,
                         "ideal_ms": 2.6, "bound_ms": 2.5, "serial_ms": 3.8})
    return rows


def test_chunking_summary_reads_the_best_and_the_host_bound():
    res = records.Result("streams_chunking", _chunking_rows(), {"gpu": "X"}, "recorded")
    s = streams.chunking_summary(res)
    assert s["numba"]["us_per_chunk"] == pytest.approx(300)
    assert s["driver"]["us_per_chunk"] == pytest.approx(20)
    assert s["numba"]["host_bound_from"] == 16 and s["driver"]["host_bound_from"] is None
    assert s["driver"]["best"]["n_chunks"] == 64 and s["numba"]["best"]["n_chunks"] == 4
    assert (s["bound_ms"], s["serial_ms"]) == (2.5, 3.8)
    import matplotlib

    matplotlib.use("Agg")
    streams.plot_chunking(res)
    with pytest.raises(ValueError, match="res column"):
        streams.chunking_summary(records.recorded("streams_pipeline"))


def test_memory_kinds_against_the_pinned_version(capsys):
    rows = [{"method": m, "n": 8, "ms": ms, "gbps": 1.0, "spread": 0.0} for m, ms in
            [("pinned: copy in, kernel, copy out", 10.0), ("mapped: the kernel reads", 5.0),
             ("managed: first kernel after the host wrote", 40.0),
             ("managed: the same kernel again", 0.1)]]
    res = records.Result("streams_memory_kinds", rows, {"gpu": "X"}, "recorded")
    s = streams.show_memory_kinds(res)
    assert (s["mapped"]["x_pinned"], s["managed, first"]["x_pinned"]) == (0.5, 4.0)
    out = capsys.readouterr().out  # the warm managed kernel moves no host data: not compared
    assert "managed, first: 4.00x" in out and "managed, again: 0.01x" not in out
    assert "managed, again: the kernel alone" in out
    assert s["mapped"]["x_pipelined"] is None  # no pipelined row in this record
    piped = rows[:1] + [dict(rows[0], method="pinned, pipelined: 4 streams, 8 chunks",
                             ms=4.0)] + rows[1:]
    s = streams.memory_kinds_summary(records.Result("streams_memory_kinds", piped,
                                                    {"gpu": "X"}, "recorded"))
    assert s["mapped"]["x_pipelined"] == 1.25
    with pytest.raises(ValueError, match="managed: first"):
        streams.memory_kinds_summary(records.Result("streams_memory_kinds", rows[:2] + rows[3:],
                                                    {"gpu": "X"}, "recorded"))


@pytest.mark.parametrize("path", _paths_with("streams_sync_calls"), ids=lambda p: p.stem)
def test_recorded_calls_that_wait(path, capsys):
    # What the chapter says of the record: some calls hold the host until the kernel in
    # another stream is done (a copy with no stream among them); a copy given a stream of
    # its own does not.
    res = records.recorded("streams_sync_calls", path=path)
    if "idle_ms" not in res.columns:
        pytest.skip(f"{path.stem}: recorded before each call was also timed alone; "
                    "re-record streams_sync_calls")
    verdict = {r["call"]: r["verdict"] for r in streams.show_sync_calls(res)}
    assert verdict["cuda.synchronize()"] == "waits for the kernel"
    assert verdict["d.copy_to_device(x) with no stream (pinned x)"] == "waits for the kernel"
    assert verdict["d.copy_to_device(x, stream=another) (pinned x)"] == "returns at once"
    assert res.gpu in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("streams_memory_kinds"), ids=lambda p: p.stem)
def test_recorded_memory_kinds(path, capsys):
    # What the chapter says: the mapped kernel is limited by the link, far below device
    # memory; the first managed kernel pays for moving the pages, the second runs far faster.
    res = records.recorded("streams_memory_kinds", path=path)
    s = streams.show_memory_kinds(res)
    again, first = s["managed, again"], s["managed, first"]
    assert again["ms"] < first["ms"] / 10 and again["ms"] < s["mapped"]["ms"] / 5
    assert first["ms"] > s["pinned"]["ms"]
    assert s["mapped"]["gbps"] < 0.1 * res.ceilings["copy_gbps"]
    assert res.gpu in capsys.readouterr().out


def test_the_managed_sentence_holds_on_the_records():
    # Chapter 7 (cell c036d): once the pages are on the device the same managed kernel runs
    # far faster than the first time, from device memory (several times what the link gives
    # the mapped kernel), yet below the copy ceiling of an ordinary device array.
    for path in _paths_with("streams_memory_kinds"):
        res = records.recorded("streams_memory_kinds", path=path)
        s = streams.memory_kinds_summary(res)
        again = s["managed, again"]
        assert again["gbps"] < res.ceilings["copy_gbps"], path.stem
        assert again["gbps"] > 10 * s["managed, first"]["gbps"], path.stem
        assert again["gbps"] > 5 * s["mapped"]["gbps"], path.stem


@pytest.mark.parametrize("path", [p for p in _paths_with("streams_default_stream")
                                  if streams.WAIT_CASE in records.recorded(
                                      "streams_default_stream", path=p).values("case")],
                         ids=lambda p: p.stem)
def test_recorded_wait_event_orders_the_streams(path):
    ds = records.recorded("streams_default_stream", path=path)
    k1 = ds.one(case=streams.WAIT_CASE, stream=1)
    k2 = ds.one(case=streams.WAIT_CASE, stream=2)
    assert k2["start_ms"] >= k1["end_ms"] - 0.01
    alone = ds.select(case="two streams")[0]["makespan_ms"]
    assert k2["makespan_ms"] > 1.5 * alone


def test_chunking_experiment_runs_end_to_end_in_the_simulator(monkeypatch):
    # The simulator's events have no clock: give them the host's, so that the experiment's
    # code (both issue paths, the stage totals, the issue times) runs here at a small size.
    import inspect
    import time

    event = type(cuda.event())
    monkeypatch.setattr(event, "record", lambda self, stream=0: setattr(self, "_t",
                                                                         time.perf_counter()),
                        raising=False)
    monkeypatch.setattr(event, "elapsed_time", lambda self, other: 1e3 * (other._t - self._t),
                        raising=False)
    monkeypatch.setattr(streams.pipeline.bench, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(experiments, "CHUNKING_N", 300)
    monkeypatch.setattr(experiments, "CHUNKING_CHUNKS", (1, 4))
    rows = inspect.unwrap(records.get("streams_chunking").fn)(lambda _: None)
    assert [(r["issue"], r["n_chunks"]) for r in rows] == [("numba", 1), ("driver", 1),
                                                           ("numba", 4), ("driver", 4)]
    assert all(r["issue_ms"] > 0 and r["h2d_ms"] > 0 and not r["driver_path"] for r in rows)
    s = streams.chunking_summary(records.Result("streams_chunking", rows, {"gpu": "sim"}, "live"))
    assert s["bound_ms"] > 0


def test_same_direction_copies_measure_every_case():
    """``streams_same_direction`` at a small size in the simulator: both directions, the three
    cases, the aggregate bandwidth from the bytes each case moved."""
    rows = gp.streams.same_direction_copies(mib=1, repeats=1)
    assert [(r["direction"], r["case"]) for r in rows] == [
        (d, c) for d in ("h2d", "d2h")
        for c in ("one copy", "one copy of twice the bytes", "two copies, two streams")]
    assert [r["mib"] for r in rows[:3]] == [1, 2, 2]
    for r in rows:
        assert r["ms"] > 0 and r["aggregate_gbps"] == pytest.approx(r["mib"] * 2**20 / r["ms"] / 1e6)
