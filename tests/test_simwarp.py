import os
import subprocess
import sys

import numpy as np
import pytest
from numba import cuda

import gpuperf  # noqa: F401  (installs the intrinsics)
from gpuperf.simwarp import WarpSyncError


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def test_shuffle_reduction_sums_each_warp():
    x = np.random.default_rng(0).random(96).astype(np.float32)
    out = np.full(3, np.nan, np.float32)
    warp_sum[1, 96](x, out)
    np.testing.assert_allclose(out, x.reshape(3, 32).sum(axis=1), rtol=1e-5)


@cuda.jit
def block_sum_last_warp_unrolled(x, out):
    # a shared-memory tree down to 64 values, then the last warp with syncwarp between steps
    s = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    if t < 64:
        s[t] += s[t + 64]
    cuda.syncthreads()
    if t < 32:
        v = s[t] + s[t + 32]
        cuda.syncwarp()
        s[t] = v
        cuda.syncwarp()
        for off in (16, 8, 4, 2, 1):
            if t < off:
                v = s[t] + s[t + off]
            cuda.syncwarp()
            if t < off:
                s[t] = v
            cuda.syncwarp()
        if t == 0:
            out[0] = s[0]


def test_syncwarp_last_warp_unroll():
    x = np.random.default_rng(1).random(128).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    block_sum_last_warp_unrolled[1, 128](x, out)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)


@cuda.jit
def votes(x, out):
    i = cuda.grid(1)
    b = cuda.ballot_sync(0xFFFFFFFF, x[i] > 0.5)
    a = cuda.any_sync(0xFFFFFFFF, x[i] > 0.99)
    al = cuda.all_sync(0xFFFFFFFF, x[i] >= 0.0)
    up = cuda.shfl_up_sync(0xFFFFFFFF, i, 1)
    xo = cuda.shfl_xor_sync(0xFFFFFFFF, i, 1)
    bc = cuda.shfl_sync(0xFFFFFFFF, i, 5)
    if cuda.laneid == 0:
        out[0] = b
        out[1] = a
        out[2] = al
        out[6] = cuda.activemask()
    if cuda.laneid == 3:
        out[3] = up
        out[4] = xo
        out[5] = bc


def test_ballot_vote_and_shuffles():
    x = np.random.default_rng(2).random(32)
    out = np.zeros(7, np.int64)
    votes[1, 32](x, out)
    assert out[0] == sum(1 << lane for lane in range(32) if x[lane] > 0.5)
    assert out[1] == int((x > 0.99).any())
    assert out[2] == 1
    assert list(out[3:6]) == [2, 2, 5]
    assert out[6] == 0xFFFFFFFF


def test_partial_warp_shuffle_fails_loudly():
    x = np.ones(48, np.float32)
    out = np.zeros(2, np.float32)
    with pytest.raises(WarpSyncError, match="do not exist"):
        warp_sum[1, 48](x, out)


def test_a_lane_that_returned_early_fails_instead_of_hanging():
    code = """
import numpy as np, gpuperf
from numba import cuda
@cuda.jit
def k(out):
    t = cuda.threadIdx.x
    if t == 7:
        return
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, t, 1)
try:
    k[1, 32](np.zeros(32, np.int64))
except Exception as e:
    print(type(e).__name__, e)
"""
    env = {**os.environ, "GPUPERF_MODE": "simulator", "GPUPERF_SIM_WARP_TIMEOUT": "2"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert "WarpSyncError" in r.stdout and "returned early" in r.stdout, r.stdout + r.stderr


@cuda.jit
def reads_shared_before_writing(out):
    s = cuda.shared.array(32, np.float32)
    out[cuda.threadIdx.x] = s[cuda.threadIdx.x]


def test_new_shared_arrays_are_poisoned():
    out = np.zeros(32, np.float32)
    reads_shared_before_writing[1, 32](out)
    assert np.isnan(out).all()


@cuda.jit
def two_shared_arrays(out):
    a = cuda.shared.array(4, np.float32)
    b = cuda.shared.array(4, np.float32)
    t = cuda.threadIdx.x
    a[t] = 1.0
    b[t] = 2.0
    cuda.syncthreads()
    out[t] = a[t] + 10 * b[t]


def test_shared_arrays_on_different_lines_are_different_arrays():
    out = np.zeros(4, np.float32)
    two_shared_arrays[1, 4](out)
    np.testing.assert_array_equal(out, 21.0)


def test_the_simulators_host_api_waits_like_a_gpu():
    """cuda.synchronize() goes through the context, a context can synchronize, a stream's
    auto_synchronize() synchronizes it on leaving, and to_device(..., to=d) returns d."""
    import numpy as np
    from numba import cuda

    calls = []
    stream = cuda.stream()
    context_cls, stream_cls = type(cuda.current_context()), type(stream)
    original_ctx, original_stream = context_cls.synchronize, stream_cls.synchronize
    context_cls.synchronize = lambda self: calls.append("context")
    stream_cls.synchronize = lambda self: calls.append("stream")
    try:
        cuda.synchronize()
        with stream.auto_synchronize():
            calls.append("inside")
    finally:
        context_cls.synchronize, stream_cls.synchronize = original_ctx, original_stream
    assert calls == ["context", "inside", "stream"]
    d = cuda.device_array(3, dtype=np.float32)
    assert cuda.to_device(np.ones(3, np.float32), to=d) is d
    fresh = cuda.to_device(np.arange(3, dtype=np.float32))
    assert fresh.copy_to_host().tolist() == [0.0, 1.0, 2.0] and fresh._ary.base is None


@cuda.jit
def two_on_a_line(out):
    a = cuda.shared.array(4, np.float32); b = cuda.shared.array(4, np.float32)  # noqa: E702
    t = cuda.threadIdx.x
    a[t] = 1.0
    b[t] = 2.0
    cuda.syncthreads()
    out[t] = a[t] + 10 * b[t]


def test_two_shared_arrays_on_one_line_are_two_arrays():
    """The simulator kept one shared array per source line; a GPU has one per declaration."""
    out = np.zeros(4, np.float32)
    two_on_a_line[1, 4](out)
    assert out.tolist() == [21.0] * 4


def test_the_simulated_device_answers_what_grid_sizing_asks():
    dev = cuda.get_current_device()
    assert dev.MULTIPROCESSOR_COUNT >= 1 and dev.WARP_SIZE == 32
    assert dev.MAX_THREADS_PER_BLOCK == 1024


@cuda.jit
def _write_thread_ids(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i


@pytest.mark.parametrize("grid, block, says", [
    (1, 1025, "at most 1024 threads"),
    (2, (32, 33), "blocks of 1056 threads"),
    (1, (1, 1, 65), "z dimension is at most 64"),
    (0, 32, "at least 1"),
    ((1, 65536), 32, "y dimension is at most 65535"),
])
def test_a_launch_a_gpu_refuses_is_refused(grid, block, says):
    from gpuperf.simwarp import LaunchError

    with pytest.raises(LaunchError, match=says):
        _write_thread_ids[grid, block](np.zeros(4, np.float32))


def test_the_largest_launches_a_gpu_takes_still_run():
    x = np.zeros(2048, np.float32)
    _write_thread_ids[2, 1024](x)
    assert (x == np.arange(2048)).all()
    _write_thread_ids[1, (4, 4, 64)](x[:4])


def test_an_event_is_done_at_once_in_the_simulator():
    s = cuda.stream()
    ev = cuda.event()
    ev.record(s)
    assert ev.query() is True
