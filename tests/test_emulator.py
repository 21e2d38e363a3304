"""The course's thread emulator: traces equal to the old simulator tracer's, results equal to
NumPy's, faults (out of bounds, misaligned 16-byte access, divergent barrier, broken warp
intrinsic) reported fast instead of hanging, races, and the checkers' preflight."""

import time

import numpy as np
import pytest
import sim_tracer
from conftest import load_wrong
from numba import cuda, float32

import gpuperf as gp
from gpuperf import emulator as em
from gpuperf import exercises as ex
from gpuperf.vector import load_float4, store_float4

co = gp.coalescing


def _requests(tr):
    return sorted((r.space, r.kind, r.array, r.line, tuple(r.block), r.warp,
                   r.access.addresses, r.access.elem_bytes) for r in tr.requests)


# --------------------------------------------------------------------------- traces


TRACE_CASES = {
    "transpose_naive": (lambda: co.transpose_naive, (1, 2), (32, 8),
                        lambda: (ex.random_array((16, 32), 0), ex.poisoned((32, 16)))),
    "transpose pad 0": (lambda: co.make_transpose(32, 8, 0), (1, 1), (32, 8),
                        lambda: (ex.random_array((32, 32), 1), ex.poisoned((32, 32)))),
    "transpose pad 1": (lambda: co.make_transpose(32, 8, 1), (1, 1), (32, 8),
                        lambda: (ex.random_array((32, 32), 1), ex.poisoned((32, 32)))),
    "copy_vec4": (lambda: co.make_copy_vec4(1), 1, 32,
                  lambda: (ex.random_array(130, 2), ex.poisoned(130))),
    "matmul uncoalesced": (lambda: co.make_matmul_bcol(16, "uncoalesced", 0), (1, 1), (16, 16),
                           lambda: (ex.random_array((16, 32), 3), ex.random_array((16, 32), 4),
                                    ex.poisoned((16, 16)))),
    "matmul corner pad 0": (lambda: co.make_matmul_bcol(16, "corner", 0), (1, 1), (16, 16),
                            lambda: (ex.random_array((16, 32), 3), ex.random_array((16, 32), 4),
                                     ex.poisoned((16, 16)))),
    "matmul corner pad 1": (lambda: co.make_matmul_bcol(16, "corner", 1), (1, 1), (16, 16),
                            lambda: (ex.random_array((16, 32), 3), ex.random_array((16, 32), 4),
                                     ex.poisoned((16, 16)))),
}


@pytest.mark.parametrize("case", list(TRACE_CASES))
def test_trace_equals_the_simulator_tracer(case):
    make, grid, block, data = TRACE_CASES[case]
    kernel = make()
    args_old, args_new = data(), data()
    old = sim_tracer.trace_numba_simulator(kernel, grid, block, *args_old)
    new = co.trace(kernel, grid, block, *args_new)
    assert _requests(new) == _requests(old)
    assert new.instructions() == old.instructions()
    for a, b in zip(args_old, args_new):
        np.testing.assert_array_equal(a, b)


def test_trace_known_numbers():
    a, out = ex.random_array((32, 32), 1), ex.poisoned((32, 32))
    for pad, conflict in ((0, 32), (1, 1)):
        tr = co.trace(co.make_transpose(32, 8, pad), (1, 1), (32, 8), a, out)
        assert tr.max_bank_conflict(array="t") == conflict
        assert tr.sectors_per_request() == pytest.approx(4.0)
    x, y = ex.random_array(256, 2), ex.poisoned(256)
    tr = co.trace(co.make_copy_vec4(1), 2, 32, x, y)
    np.testing.assert_array_equal(x, y)
    assert tr.sectors_per_request(array="src") == pytest.approx(16.0)
    assert {r.access.elem_bytes for r in tr.select(array="dst")} == {16}


def test_trace_does_not_use_the_simulator(monkeypatch):
    """trace() never launches through Numba's simulator, and ignores the mode flag."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    def refuse(*args, **kwargs):
        raise AssertionError("the simulator was used")

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", refuse)
    monkeypatch.setattr(co.checks, "SIMULATOR", False)  # the flag the chapter's checkers read
    a, out = ex.random_array((16, 32), 0), ex.poisoned((32, 16))
    tr = co.trace(co.transpose_naive, (1, 2), (32, 8), a, out)
    np.testing.assert_array_equal(out, a.T)
    assert tr.sectors_per_request(array="out") == pytest.approx(32.0)


def test_plain_python_kernel_on_the_fake_namespace():
    ecuda = em.cuda

    def reverse_in_blocks(x):
        s = ecuda.shared.array(32, np.float32)
        i = ecuda.grid(1)
        s[ecuda.threadIdx.x] = x[i]
        ecuda.syncthreads()
        x[i] = s[31 - ecuda.threadIdx.x]

    x = np.arange(64, dtype=np.float32)
    run = em.launch(reverse_in_blocks, 2, 32, x)
    np.testing.assert_array_equal(x, np.r_[np.arange(31, -1, -1), np.arange(63, 31, -1)])
    assert {e.array for e in run.accesses(space="shared")} == {"s"}
    assert len(run.accesses(space="global", kind="load")) == 64
    assert run.races() == []


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize("rows,cols", [(1, 1), (31, 33), (40, 70)])
def test_transpose_results(rows, cols):
    a = ex.random_array((rows, cols), rows)
    out = ex.poisoned((cols, rows))
    em.launch(co.make_transpose(32, 8, 1), (-(-cols // 32), -(-rows // 32)), (32, 8), a, out,
              record=False)
    np.testing.assert_array_equal(out, a.T)


def test_matmul_and_copy_results():
    A, B = ex.random_array((20, 33), 8), ex.random_array((33, 18), 9)
    C = ex.poisoned((20, 18))
    em.launch(co.make_matmul_bcol(8, "corner", 1), (3, 3), (8, 8), A, np.ascontiguousarray(B.T), C)
    ref = A.astype(np.float64) @ B
    np.testing.assert_allclose(C, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    x, y = ex.random_array(301, 1), ex.poisoned(301)
    em.launch(co.make_copy_vec4(2), 2, 32, x, y, record=False)
    np.testing.assert_array_equal(x, y)


@cuda.jit(device=True)
def _twice(v):
    return v * 2


def _make_warp_sum():
    twice = _twice  # a device function held in a closure cell

    @cuda.jit
    def warp_sum(x, out, counts):
        i = cuda.grid(1)
        v = twice(x[i]) if i < x.size else float32(0.0)
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        n = cuda.syncthreads_count(i < x.size)
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, v)
        if cuda.threadIdx.x == 0:
            counts[cuda.blockIdx.x] = n

    return warp_sum


def test_device_functions_shuffles_atomics():
    x = ex.random_array(100, 3)
    out = np.zeros(1, np.float32)
    counts = np.zeros(2, np.int32)
    run = em.launch(_make_warp_sum(), 2, 64, x, out, counts)
    assert out[0] == pytest.approx(2 * x.astype(np.float64).sum(), rel=1e-4)
    assert counts.tolist() == [64, 36]
    assert {e.kind for e in run.accesses(array="out")} == {"atomic"}
    assert run.races() == []


def test_shared_arrays_follow_call_order_not_lines():
    @cuda.jit
    def two(out):
        a, b = cuda.shared.array(2, float32), cuda.shared.array(2, float32)
        t = cuda.threadIdx.x
        a[t] = 1.0
        b[t] = 2.0
        cuda.syncthreads()
        out[t] = a[1 - t] + 10 * b[1 - t]
        out[2 + t] = a[t] if cuda.blockIdx.x == 9 else float32(0.0)

    out = ex.poisoned(4)
    em.launch(two, 1, 2, out)
    np.testing.assert_array_equal(out[:2], [21.0, 21.0])

    @cuda.jit
    def unwritten(out):
        s = cuda.shared.array(4, float32)
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

    out = np.zeros(4, np.float32)
    em.launch(unwritten, 1, 4, out)
    assert np.isnan(out).all()


def test_device_arrays_are_copied_in_and_back():
    x = cuda.to_device(ex.random_array((8, 32), 4))
    out = cuda.device_array((32, 8), np.float32)
    em.launch(co.transpose_naive, (1, 1), (32, 8), x, out)
    np.testing.assert_array_equal(out.copy_to_host(), x.copy_to_host().T)


# --------------------------------------------------------------------------- faults


def test_out_of_bounds_names_array_index_shape_and_thread():
    mod = dict(load_wrong("coalescing"))["remap_no_bounds"]
    x, w, out = ex.random_array((7, 40), 0), ex.random_array(7, 1), ex.poisoned((7, 40))
    with pytest.raises(IndexError, match=r"x\[7, 0\] is out of bounds: x has shape \(7, 40\) "
                                         r"\(thread 24 of block 2\)"):
        em.launch(mod.kernel, 3, 128, x, w, out)

    @cuda.jit
    def second_dim(a):
        a[0, cuda.threadIdx.x] = 1.0  # 2-D: a column past the end is not the next row

    with pytest.raises(em.OutOfBounds, match=r"a\[0, 4\]"):
        em.launch(second_dim, 1, 5, np.zeros((3, 4), np.float32))


@cuda.jit
def _vec_copy_off_by_one(x, y):
    i = cuda.grid(1)
    store_float4(y, 4 * i, load_float4(x, 4 * i + 1))


@cuda.jit
def _vec_copy(x, y):
    i = cuda.grid(1)
    store_float4(y, 4 * i, load_float4(x, 4 * i))


def test_misaligned_float4():
    x, y = ex.random_array(64, 0), ex.poisoned(64)
    with pytest.raises(em.MisalignedAccess, match="misaligned 16-byte access"):
        em.launch(_vec_copy_off_by_one, 1, 8, x, y)
    view = cuda.to_device(x)[4:]  # 16 bytes in: still aligned
    em.launch(_vec_copy, 1, 8, view, cuda.to_device(y[:60]))
    with pytest.raises(em.MisalignedAccess, match="bytes 4..19"):
        em.launch(_vec_copy, 1, 8, cuda.to_device(x)[1:], cuda.to_device(y[:63]))


def test_divergent_barriers_fail_fast():
    mod = dict(load_wrong("coalescing"))["transpose_early_return"]
    t0 = time.time()
    with pytest.raises(em.BarrierError, match=r"not reached by all threads of block \(1, 0\).*"
                                              r"248 threads .* exited"):
        em.launch(mod.kernel, (2, 1), (32, 8), ex.random_array((3, 33), 0), ex.poisoned((33, 3)))

    @cuda.jit
    def two_barriers(x):
        i = cuda.grid(1)
        if i % 2:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        x[i] = 1.0

    with pytest.raises(em.BarrierError, match="wait at cuda.syncthreads"):
        em.launch(two_barriers, 1, 64, np.zeros(64, np.float32))
    assert time.time() - t0 < 10


def test_broken_shuffles_fail_fast():
    @cuda.jit
    def early_exit(x):
        i = cuda.grid(1)
        if i >= 20:
            return
        x[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)

    t0 = time.time()
    with pytest.raises(em.WarpSyncError, match="12 threads .* exited"):
        em.launch(early_exit, 1, 32, np.zeros(32, np.float32))

    @cuda.jit
    def partial_warp(x):
        x[cuda.threadIdx.x] = cuda.shfl_sync(0xFFFFFFFF, 1.0, 0)

    with pytest.raises(em.WarpSyncError, match="do not exist"):
        em.launch(partial_warp, 1, 48, np.zeros(48, np.float32))
    assert time.time() - t0 < 5


def test_unsupported_names_the_feature():
    @cuda.jit
    def uses_match(x):
        x[0] = cuda.match_any_sync(0xFFFFFFFF, 1)

    with pytest.raises(NotImplementedError, match="cuda.match_any_sync"):
        em.launch(uses_match, 1, 32, np.zeros(1, np.float32))


# --------------------------------------------------------------------------- races


def test_races():
    wrong = dict(load_wrong("coalescing"))
    a, out = ex.random_array((32, 32), 0), ex.poisoned((32, 32))
    run = em.launch(wrong["transpose_no_barrier"].kernel, (1, 1), (32, 8), a, out)
    races = run.races()
    assert races and {(r.space, r.array, r.kind) for r in races} == {("shared", "t", "read-write")}
    assert "no cuda.syncthreads()" in run.describe_races()[0]
    run = em.launch(co.make_transpose(32, 8, 1), (1, 1), (32, 8), a, out)
    assert run.races() == []

    @cuda.jit
    def same_out(out):
        out[0] = cuda.blockIdx.x

    kinds = {(r.kind, r.first.block == r.second.block)
             for r in em.launch(same_out, 2, 2, np.zeros(1, np.float32)).races()}
    assert kinds == {("write-write", True), ("write-write", False)}


def test_warp_synchronous_code_after_syncwarp_is_not_a_race():
    @cuda.jit
    def warp_reverse(x):
        s = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        s[t] = x[t]
        cuda.syncwarp()
        x[t] = s[31 - t]

    x = np.arange(32, dtype=np.float32)
    assert em.launch(warp_reverse, 1, 32, x).races() == []
    np.testing.assert_array_equal(x, np.arange(31, -1, -1))


# --------------------------------------------------------------------------- preflight


def test_preflight_refuses_faulting_kernels(capsys):
    wrong = dict(load_wrong("coalescing"))
    chk = ex.Checker("preflight")
    assert not chk.preflight(wrong["transpose_early_return"].kernel, (2, 1), (32, 8),
                             ex.random_array((3, 33), 0), ex.poisoned((33, 3)))
    report = chk.report()
    assert not report and "not reached by all threads" in report.failed[0][1]
    chk = ex.Checker("preflight")
    assert ex.preflight(chk, co.make_transpose(32, 8, 1), (2, 1), (32, 8),
                        ex.random_array((3, 33), 0), ex.poisoned((33, 3)))
    assert chk.report(show=False).passed

    @cuda.jit
    def uses_match(x):
        x[0] = cuda.match_any_sync(0xFFFFFFFF, 1)

    chk = ex.Checker("preflight")
    assert ex.preflight(chk, uses_match, 1, 32, np.zeros(1, np.float32))
    assert "skipped" in chk.report(show=False).notes[0]


def test_preflight_fails_a_race_the_schedule_hides(capsys):
    """Two blocks merge into one global slot with a plain +=: right in the emulator (blocks
    run one after another), a lost update on a GPU. An atomic merge is no race."""

    @cuda.jit
    def plain_merge(x, total):
        if cuda.threadIdx.x == 0:
            total[0] += x[cuda.blockIdx.x]

    @cuda.jit
    def atomic_merge(x, total):
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(total, 0, x[cuda.blockIdx.x])

    x = np.ones(2, np.float32)
    chk = ex.Checker("preflight")
    total = np.zeros(1, np.float32)
    assert ex.preflight(chk, plain_merge, 2, 32, x, total)  # no fault: the real run goes on
    assert total[0] == 2  # and the emulator's own result is right
    report = chk.report(show=False)
    assert not report and "race on global total" in report.failed[0][1]
    assert "from blocks (0, 0, 0) and (1, 0, 0)" in report.failed[0][1]
    chk = ex.Checker("preflight")
    assert ex.preflight(chk, atomic_merge, 2, 32, x, np.zeros(1, np.float32))
    assert chk.report(show=False).passed
    chk = ex.Checker("preflight")
    assert ex.preflight(chk, plain_merge, 2, 32, x, np.zeros(1, np.float32), races=False)
    assert chk.report(show=False).passed


def test_checkers_refuse_faults_before_any_launch(capsys):
    wrong = dict(load_wrong("coalescing"))
    assert not co.check_padded_transpose(wrong["transpose_early_return"].kernel)
    assert not co.check_remap(wrong["remap_no_bounds"].kernel)
    out = capsys.readouterr().out
    assert out.count("dry run in the thread emulator") == 2
    assert "not reached by all threads" in out and "out of bounds" in out


def test_padded_transpose_checker_names_a_race(capsys):
    wrong = dict(load_wrong("coalescing"))
    assert not co.check_padded_transpose(wrong["transpose_no_barrier"].kernel)
    assert "read-write race on shared t" in capsys.readouterr().out


def test_a_feature_the_emulator_lacks_skips_the_case():
    chk = ex.Checker("unsupported")
    with chk.case("traced"):
        raise em.Unsupported("cuda.match_any_sync is not supported by gpuperf's thread emulator.")
    with chk.case("plain"):
        pass
    report = chk.report(show=False)
    assert report and report.passed == ["plain"] and "match_any_sync" in report.notes[-1]
    assert gp.emulator is em


def test_an_endless_loop_times_out():
    @cuda.jit
    def spin(x):
        i = cuda.grid(1)
        while x[0] == 0.0:  # nobody ever writes x[0]
            i += 1

    t0 = time.time()
    with pytest.raises(em.LaunchTimeout, match="was stopped after 1 s"):
        em.launch(spin, 1, 4, np.zeros(1, np.float32), record=False, timeout=1)
    assert time.time() - t0 < 5
    time.sleep(0.2)  # the spinning threads stop at their next access
    import threading

    assert not [t for t in threading.enumerate() if t.name.startswith("emulated")]


# --------------------------------------------------------------------------- host dry runs


@cuda.jit
def _sum4_ignoring_alignment(x, out, n):
    # Wrong on purpose: 16-byte loads from the first element, wherever x starts.
    g = cuda.grid(1)
    total = float32(0.0)
    v = g
    while 4 * v + 3 < n:
        a, b, c, d = load_float4(x, 4 * v)
        total += (a + b) + (c + d)
        v += cuda.gridsize(1)
    cuda.atomic.add(out, 0, total)


_cache = {}


def _student_sum(d_x):
    n = d_x.shape[0]
    if n not in _cache:  # a student's buffer cache: the dry run must leave it empty
        _cache[n] = cuda.device_array(1, np.float32)
    out = _cache[n]
    out.copy_to_device(np.zeros(1, np.float32))
    _sum4_ignoring_alignment[2, 32](d_x, out, n)
    return float(out.copy_to_host()[0])


def test_run_host_runs_the_launches_in_the_emulator_and_leaves_caches_alone():
    x = np.arange(100, dtype=np.float32)
    assert em.run_host(_student_sum, em.host_view(x)) == float(x.sum())
    assert _cache == {}
    view = em.host_view(x, 1)
    assert view.ctypes.data % 16 == 4 and isinstance(view, em.HostArray)
    with pytest.raises(em.MisalignedAccess):
        em.run_host(_student_sum, view)


def test_preflight_host_refuses_a_misaligned_sum(capsys):
    chk = ex.Checker("host preflight")
    x = np.arange(100, dtype=np.float32)
    assert ex.preflight_host(chk, _student_sum, em.host_view(x))
    assert not ex.preflight_host(chk, _student_sum, em.host_view(x, 1))
    report = chk.report(show=False)
    assert "misaligned" in report.failed[0][1]


def test_matmul_checker_dry_runs_the_launch(capsys):
    from gpuperf.kernels import matmul as mm

    def make_out_of_bounds(tile):
        @cuda.jit
        def k(A, B, C):
            row = cuda.blockIdx.y * tile + cuda.threadIdx.y
            col = cuda.blockIdx.x * tile + cuda.threadIdx.x
            acc = float32(0.0)
            for i in range(A.shape[1]):
                acc += A[row, i] * B[i, col]  # no bounds check: edge threads read past A
            C[row, col] = acc

        return k

    assert not mm.check_tiled(make_out_of_bounds, tile=4)
    out = capsys.readouterr().out
    assert "dry run of your function" in out and "out of bounds" in out


CONSTANT_TABLE = np.arange(4, dtype=np.float32)
COUNTER = np.zeros(1, np.float32)


def test_a_global_array_is_a_read_only_constant_as_on_a_gpu():
    """A kernel reads a module-level array like a GPU's constant copy, and a write to one (or
    an atomic: on a GPU it faults and ends the CUDA session) is a fault that names it; the
    host's own writes to the same array are untouched."""
    @cuda.jit
    def reads(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = CONSTANT_TABLE[i % 4] * 2

    @cuda.jit
    def counts(x):
        cuda.atomic.add(COUNTER, 0, x[0])

    out = np.zeros(8, np.float32)
    em.launch(reads, 1, 8, out)
    assert list(out) == [0, 2, 4, 6, 0, 2, 4, 6]
    with pytest.raises(em.ConstantWrite, match="COUNTER"):
        em.launch(counts, 1, 1, np.ones(1, np.float32))
    assert em.ConstantWrite in em.FAULTS
    COUNTER[0] = 5.0  # the host's array stays writable
    assert COUNTER[0] == 5.0


def test_a_closure_array_written_by_a_kernel_is_named():
    table = np.zeros(2, np.float32)

    @cuda.jit
    def writes(x):
        table[0] = x[0]

    with pytest.raises(em.ConstantWrite, match="table"):
        em.launch(writes, 1, 1, np.ones(1, np.float32))
