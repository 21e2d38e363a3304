"""The simulator's blocks run as greenlets (gpuperf.simblock): the same results as the
simulator's threads, the same order every time, and a wait that cannot end found at once."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from numba import cuda, float32

import gpuperf  # noqa: F401  (installs the runner)
from gpuperf import simblock
from gpuperf.simwarp import WarpSyncError

pytestmark = pytest.mark.skipif(not simblock.available(), reason="greenlet is not installed")


def test_the_simulator_runs_blocks_as_greenlets():
    from numba.cuda.simulator import kernel as fake_kernel

    assert fake_kernel.BlockManager.__name__ == "GreenBlockManager"
    assert simblock.installed()  # what the checkers' note on the simulator reads


@cuda.jit
def tree_sum(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def test_a_barrier_tree_gives_the_right_sums():
    x = np.random.default_rng(0).random(1000).astype(np.float32)
    out = np.zeros(8, np.float32)
    tree_sum[8, 128](x, out)
    want = np.add.reduceat(np.pad(x, (0, 24)), np.arange(0, 1024, 128))
    np.testing.assert_allclose(out, want, rtol=1e-5)


@cuda.jit
def racy_tree_sum(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]  # no barrier between the steps: a race
        stride //= 2
    if t == 0:
        out[0] = s[0]


def test_a_race_gives_the_same_result_on_every_run():
    """Thread order is fixed, so a race shows the same way every time (a regrade of a racy
    answer gives the same verdict)."""
    x = np.random.default_rng(1).random(128).astype(np.float32)
    results = set()
    for _ in range(5):
        out = np.zeros(1, np.float32)
        racy_tree_sum[1, 128](x, out)
        results.add(float(out[0]))
    assert len(results) == 1
    assert abs(results.pop() - float(x.sum())) > 1e-3  # and here it shows


@cuda.jit
def counts(x, out):
    t = cuda.threadIdx.x
    out[0] = cuda.syncthreads_count(x[t] > 0.5)
    out[1] = cuda.syncthreads_and(x[t] >= 0.0)
    out[2] = cuda.syncthreads_or(x[t] > 2.0)


def test_syncthreads_count_and_or():
    x = np.random.default_rng(2).random(96).astype(np.float32)
    out = np.zeros(3, np.int32)
    counts[1, 96](x, out)
    assert list(out) == [int((x > 0.5).sum()), 1, 0]


@cuda.jit
def early_exit_shuffle(x, out):
    t = cuda.threadIdx.x
    if t == 5:
        return
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, x[t], 1)


def test_a_lane_that_never_arrives_is_named_at_once():
    x = np.zeros(32, np.float32)
    out = np.zeros(32, np.float32)
    start = time.perf_counter()
    with pytest.raises(WarpSyncError, match=r"lanes \[5\] of warp 0"):
        early_exit_shuffle[1, 32](x, out)
    assert time.perf_counter() - start < 5  # not the threads' 20 s timeout


@cuda.jit
def out_of_range(out):
    out[cuda.threadIdx.x + 1] = 1.0


def test_an_error_names_the_thread_and_block():
    with pytest.raises(IndexError, match=r"tid=\[3, 0, 0\] ctaid=\[0, 0, 0\]"):
        out_of_range[1, 4](np.zeros(4, np.float32))


def test_kernel_threads_are_told_from_the_host():
    seen = []

    @cuda.jit
    def probe(out):
        out[cuda.threadIdx.x] = out[0] + 1.0

    assert not simblock.in_kernel()
    original = type(cuda.to_device(np.zeros(1, np.float32))).__getitem__

    def spy(arr, index):
        seen.append(simblock.in_kernel())
        return original(arr, index)

    d = cuda.to_device(np.zeros(2, np.float32))
    type(d).__getitem__ = spy
    try:
        d[0]
    finally:
        type(d).__getitem__ = original
    assert seen == [False]
    type(d).__getitem__ = spy
    try:
        probe[1, 2](d)
    finally:
        type(d).__getitem__ = original
    assert seen[0] is False and seen[1:] and all(seen[1:]), seen


def test_the_simulators_own_threads_give_the_same_answers():
    """GPUPERF_SIM_THREADS=1 keeps Numba's thread per CUDA thread: the barrier tree and the
    warp shuffles give the same sums there."""
    script = (
        "import numpy as np, gpuperf\n"
        "from numba.cuda.simulator import kernel as k\n"
        "assert k.BlockManager.__name__ == 'BlockManager', k.BlockManager\n"
        "import test_simblock as t\n"
        "x = np.random.default_rng(0).random(1000).astype(np.float32)\n"
        "out = np.zeros(8, np.float32)\n"
        "t.tree_sum[8, 128](x, out)\n"
        "print(repr(out.tolist()))\n")
    env = {**os.environ, "GPUPERF_SIM_THREADS": "1", "GPUPERF_MODE": "simulator",
           "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__),
                                          os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    x = np.random.default_rng(0).random(1000).astype(np.float32)
    out = np.zeros(8, np.float32)
    tree_sum[8, 128](x, out)
    assert eval(r.stdout.strip().splitlines()[-1]) == out.tolist()
