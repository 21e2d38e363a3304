"""Launch cost, hardware queues and CUDA graphs (gpuperf.kernels.streams.launch; ``gp.launch``,
gpuperf.kernels.launch, re-exports its public names).

The measurements need a GPU (the GPU self-check and ``gpuperf.record`` run them); here: the
queue model against a step-by-step simulation of in-order queues, the issue orders, the
tables drawn from rows shaped like the experiments', and the refusals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gpuperf as gp
from gpuperf import records
from gpuperf.kernels.streams import launch  # the module itself: its private helpers are tested too


def simulate_queues(n_streams, connections, order, k, events):
    """Makespan (in kernel times) of in-order queues, simulated one time unit at a time.

    Stream s uses queue s % connections. A queue starts its commands in order, each no earlier
    than the one before it; a kernel starts when its stream's previous kernel has ended and
    runs one unit; an event (after a stream's last kernel) completes when that kernel ends,
    and nothing behind it in its queue starts before that.
    """
    queues = [[] for _ in range(connections)]
    for s, j in launch.issue_order(n_streams, order, k):
        queues[s % connections].append(("kernel", s, j))
        if events and j == k - 1:
            queues[s % connections].append(("event", s, j))
    end = {}  # (stream, kernel) -> end time
    heads = [0] * connections
    t, finish = 0, 0
    while any(h < len(q) for h, q in zip(heads, queues)):
        progressed = True
        while progressed:  # start every command that can start at time t, in queue order
            progressed = False
            for qi, q in enumerate(queues):
                if heads[qi] == len(q):
                    continue
                kind, s, j = q[heads[qi]]
                if kind == "kernel" and (j == 0 or end[(s, j - 1)] <= t):
                    end[(s, j)] = t + 1
                    finish = max(finish, t + 1)
                elif kind == "event" and end.get((s, j), np.inf) <= t:
                    pass  # the kernel it follows has ended: the event completes now
                else:
                    continue  # the head waits, and so does everything behind it
                heads[qi] += 1
                progressed = True
        t += 1
        assert t < 10_000
    return finish


@pytest.mark.parametrize("order,events", list(itertools.product(launch.ORDERS, (False, True))))
def test_queue_model_matches_a_simulation_of_in_order_queues(order, events):
    for n, c, k in itertools.product(range(1, 13), (1, 2, 3, 4, 8, 32), (1, 2, 3, 4)):
        want = simulate_queues(n, c, order, k, events)
        got = launch.queue_model(n, c, order, k, events=events)
        assert got == want, (n, c, order, k, events)


def test_queue_model_on_the_experiments_configuration():
    # 16 streams of two kernels: the numbers the chapter's table is read against
    m = launch.queue_model
    assert [m(16, c, "depth-first") for c in (1, 2, 8, 32)] == [17, 9, 3, 2]
    assert [m(16, c, "breadth-first") for c in (1, 2, 8, 32)] == [2, 2, 2, 2]
    assert [m(16, c, "depth-first", events=True) for c in (1, 2, 8, 32)] == [32, 16, 4, 2]
    assert [m(16, c, "breadth-first", events=True) for c in (1, 2, 8, 32)] == [17, 9, 3, 2]


def test_issue_orders():
    assert launch.issue_order(2, "depth-first") == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert launch.issue_order(2, "breadth-first") == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert launch.issue_order(3, "breadth-first", 1) == [(0, 0), (1, 0), (2, 0)]


@pytest.mark.parametrize("call,word", [
    (lambda: launch.queue_model(16, 0, "depth-first"), "connections"),
    (lambda: launch.queue_model(16, 1, "depth"), "order"),
    (lambda: launch.queue_model(16, 1, "depth-first", events=1), "events"),
    (lambda: launch.issue_order(0, "depth-first"), "n_streams"),
    (lambda: launch.hardware_queue_rows(connections=[1, 33]), "connections"),
    (lambda: launch.hardware_queue_rows(connections=8), "connections"),
    (lambda: launch.hardware_queue_rows(kernel_ms=0), "kernel_ms"),
    (lambda: launch.launch_cost_rows(launches=0), "launches"),
])
def test_bad_arguments_name_the_parameter(call, word):
    with pytest.raises((TypeError, ValueError), match=word):
        call()


def test_measuring_needs_a_gpu():
    with pytest.raises(gp.bench.NeedsGPU):
        launch.launch_cost_rows(launches=2, repeats=1)
    with pytest.raises(gp.bench.NeedsGPU):
        launch.hardware_queue_rows(connections=(1,), n_streams=2)
    with pytest.raises(gp.bench.NeedsGPU):
        launch.CapturedGraph(lambda s: None)


def _result(name, rows):
    return records.Result(name, rows, {"gpu": "Test GPU"}, "recorded")


def test_launch_cost_summary_reads_the_rows(capsys):
    rows = [{"method": launch.METHODS[0], "launches": 200, "host_us": 20.0, "gpu_us": 20.1,
             "host_spread": 0.01, "gpu_spread": 0.02, "counted": True},
            {"method": launch.METHODS[2], "launches": 200, "host_us": 4.0, "gpu_us": 8.0,
             "host_spread": 0.01, "gpu_spread": 0.02, "counted": True},
            {"method": launch.METHODS[3], "launches": 200, "host_us": 0.05, "gpu_us": 1.0,
             "host_spread": 0.1, "gpu_spread": 0.03, "counted": False, "build_ms": 2.5}]
    got = launch.show_launch_cost(_result("streams_launch_cost", rows))
    assert [r["host_bound"] for r in got] == [True, False, False]
    assert [r["x_graph"] for r in got] == [pytest.approx(20.1), pytest.approx(8.0), 1.0]
    assert got[2]["counted"] is False  # a lost launch is shown, not hidden
    out = capsys.readouterr().out
    assert "Test GPU" in out and "2.5 ms, once" in out


def test_launch_cost_summary_without_a_graph_row():
    rows = [{"method": launch.METHODS[0], "launches": 5, "host_us": 20.0, "gpu_us": 20.1,
             "host_spread": 0.0, "gpu_spread": 0.0, "counted": True}]
    assert launch.launch_cost_summary(_result("x", rows))[0]["x_graph"] is None


def test_hardware_queue_table(capsys):
    rows = [{"connections": c, "timing": t, "order": o, "n_streams": 16, "makespan_ms": 10.0,
             "kernel_ms": 5.0, "issue_ms": 0.5, "in_kernels": 2.0,
             "model": launch.queue_model(16, c, o, events=t == launch.TIMINGS[1])}
            for c in (1, 8) for t in launch.TIMINGS for o in launch.ORDERS]
    got = launch.show_hardware_queues(_result("streams_hardware_queues", rows))
    assert [r["model"] for r in got[:4]] == [17, 2, 32, 17]
    assert "16 streams" in capsys.readouterr().out


def test_tables_refuse_another_experiments_result():
    other = _result("streams_pipeline", [{"work": "x", "iters": 0}])
    with pytest.raises(ValueError, match="method"):
        launch.launch_cost_summary(other)
    with pytest.raises(ValueError, match="connections"):
        launch.show_hardware_queues(other)


def test_the_new_process_script_names_its_function():
    src = launch._queue_script(4, 100, 2)
    assert "launch._queue_rows_here(4, 100, 2)" in src
    compile(src, "<queue script>", "exec")


def test_ptx_targets_listed():
    assert [k.py_func.__name__ for k, _ in launch.PTX_TARGETS] == ["bump"]


def test_the_old_module_name_re_exports_the_launch_machinery():
    from gpuperf.kernels import launch as old_name

    assert gp.launch is old_name
    for name in ("NotPackable", "PackedLaunch", "bump", "queue_model", "show_launch_cost",
                 "show_hardware_queues", "launch_cost_rows", "hardware_queue_rows"):
        assert getattr(old_name, name) is getattr(launch, name)


def test_bump_counts_launches_in_the_simulator():
    from numba import cuda

    c = cuda.to_device(np.zeros(1, np.int64))
    for _ in range(3):
        launch.bump[2, 32](c)
    assert c.copy_to_host()[0] == 3


# --------------------------------------------------------------------------- packed arguments


class _FakeDeviceArray:
    """Just the CUDA Array Interface a packed launch reads (no GPU needed)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7F0000001000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (ptr, False), "version": 3}


def test_kernel_params_lay_out_arrays_and_integers_as_numbas_array_model():
    import ctypes

    from numba.core import types

    a = _FakeDeviceArray((3, 5), ptr=4096)
    params = launch.kernel_params((types.Array(types.float32, 2, "C"), types.int64, types.uint32),
                              (a, -7, 9))
    values = [p.value for p in params]
    # meminfo, parent, items, item size, data, shape (2), strides (2) in bytes; then the ints
    assert values == [None, None, 15, 4, 4096, 3, 5, 20, 4, -7, 9]
    assert isinstance(params[-2], ctypes.c_int64) and isinstance(params[-1], ctypes.c_uint32)


def test_kernel_params_refuse_what_numba_would_convert_differently():
    from numba.core import types

    f32 = types.Array(types.float32, 1, "C")
    with pytest.raises(launch.NotPackable, match="strides"):
        launch.kernel_params((f32,), (_FakeDeviceArray((4,), strides=(8,)),))
    with pytest.raises(launch.NotPackable, match="C-contiguous"):
        launch.kernel_params((types.Array(types.float32, 1, "A"),), (_FakeDeviceArray((4,)),))
    with pytest.raises(launch.NotPackable, match="float64"):
        launch.kernel_params((types.float64,), (1.5,))
    with pytest.raises(launch.NotPackable, match="does not match"):  # float64 into float32
        launch.kernel_params((f32,), (_FakeDeviceArray((4,), typestr="<f8"),))
    with pytest.raises(launch.NotPackable, match="does not match"):  # 2-D into 1-D
        launch.kernel_params((f32,), (_FakeDeviceArray((2, 2)),))
    with pytest.raises(launch.NotPackable, match="C-contiguous device array"):
        launch.kernel_params((f32,), (np.zeros(4, np.float32),))  # host memory: not packed
    with pytest.raises(launch.NotPackable, match="does not fit"):  # ctypes would wrap it
        launch.kernel_params((types.int32,), (2**31,))
    with pytest.raises(launch.NotPackable, match="does not fit"):
        launch.kernel_params((types.uint64,), (-1,))
    with pytest.raises(launch.NotPackable, match="2 arguments for 1 parameters"):
        launch.kernel_params((f32,), (1, 2))


def test_packed_launch_is_refused_under_the_simulator():
    with pytest.raises(launch.NotPackable, match="simulator"):
        launch.PackedLaunch(launch.bump, 1, 32, np.zeros(1, np.int64))


def test_launch_cost_prints_the_packed_ratio_where_the_record_has_the_row(capsys):
    def row(method, host):
        return {"method": method, "launches": 200, "host_us": host, "gpu_us": host,
                "host_spread": 0.0, "gpu_spread": 0.0, "counted": True}

    launch.show_launch_cost(_result("streams_launch_cost",
                                    [row(launch.METHODS[0], 20.0), row(launch.METHODS[4], 5.0)]))
    assert "the arguments packed once: 0.25x Numba's host time per launch" in (
        capsys.readouterr().out)
    launch.show_launch_cost(_result("streams_launch_cost", [row(launch.METHODS[0], 20.0)]))
    assert "packed" not in capsys.readouterr().out
