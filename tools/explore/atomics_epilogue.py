"""Exploration for chapter 6.2's 2^28 question: the warp atomics spread over 16 words cost about
nothing at 2^24 and about 11 us at 2^28 on the H200, with the same 528 x 512 grid and the same
8,448 atomics at both sizes; one atomic per block costs nothing at either. The per-block kernel
differs from the warp kernels in two things at once: 16x fewer atomics, and an epilogue (a
barrier and shared memory) between the loads and the atomics. This separates them with two
controls, same loads and grid as ``reduce.make_warp_atomic``:

- ``barrier, per-warp atomics``: v7's block epilogue (each warp's sum parked in shared memory,
  one barrier), then warps' lane-0 threads ``t < block // 32`` add the parked sums: the warp
  atomics' count and values on one word, behind the per-block kernel's barrier. Exact sum.
- ``no barrier, one atomic per block``: the warp kernel, but only warp 0's lane 0 adds (its own
  warp's sum; the result is wrong on purpose, a timing control): the per-block count, without
  the barrier.

If the excess follows the count, the first control pays it and the second does not; if it
follows the missing barrier (every warp's atomic issued as soon as its loads end, the loads of
other warps still in flight), the first does not and the second may. Registers per thread of
every kernel are printed too. GPU busy time per call (CUPTI), three rounds, against v8's two
passes. Run on a GPU from the repository root: PYTHONPATH=src python3 tools/explore/atomics_epilogue.py

First run, NVIDIA H200, 2026-11-28, numba-cuda 0.30.4 (GPU busy per call over the two passes,
median of three rounds; the rounds agree within 0.9 us):

    floats  warp,1 word  warp,16 words  barrier+per-warp,1 word  no barrier,1/block  block,1 word
    2^20    +11.6 us     -0.2 us        +12.1 us                 -1.1 us             -0.7 us
    2^24    +10.5 us     +0.8 us        +11.0 us                 -1.0 us             -0.8 us
    2^28    +16.5 us     +12.8 us       +6.5 us                  -0.7 us             -0.6 us

What it settles: the barrier is not what makes one atomic per block free. Without it, one
atomic per block costs nothing at any size; with it, the warp atomics' count on one word keeps
the whole excess at 2^20 and 2^24 (contention on the word). At 2^28 the excess follows the number
of atomics per block (16 against 1, same grid and loads, with or without spreading them), and
the barrier halves it (+6.5 against +16.5 us): atomics issued as each warp ends its loads, while
other warps still read, cost more than the same atomics issued together after a barrier. Why
that costs only at 2^28 (each thread's loop is 16 times longer than at 2^24, so warps of one
block end further apart) is not measured yet: a next step is the spread of warp end times, or
ncu's L2 atomic and DRAM metrics for the two 2^28 kernels.
"""
import functools

import numpy as np
from numba import cuda, float32

from gpuperf.kernels import reduce as red

WARP = 32  # a module global, so that Numba sees a constant size for the shared array


@functools.lru_cache(maxsize=None)
def make_barrier_then_warp_atomics(block: int):
    warps = block // WARP

    @cuda.jit
    def reduce_barrier_warp_atomics(x, out, n, head):
        warp_sums = cuda.shared.array(WARP, float32)
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        v = red.warp_sum(red._vector_stride_sum(x, n, head, g, cuda.gridDim.x * block))
        if cuda.threadIdx.x % WARP == 0:
            warp_sums[cuda.threadIdx.x // WARP] = v
        cuda.syncthreads()
        t = cuda.threadIdx.x
        if t < warps:
            cuda.atomic.add(out, 0, warp_sums[t])

    return reduce_barrier_warp_atomics


@functools.lru_cache(maxsize=None)
def make_warp0_atomic_only(block: int):
    @cuda.jit
    def reduce_warp0_atomic_only(x, out, n, head):
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        total = red.warp_sum(red._vector_stride_sum(x, n, head, g, cuda.gridDim.x * block))
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(out, 0, total)

    return reduce_warp0_atomic_only


def regs(kernel):
    try:
        return next(iter(kernel.overloads.values())).get_regs_per_thread()
    except Exception:
        return None


def main():
    for n in (2**20, 2**24, 2**28):
        d_x, ref = red._random_device(n)
        d_int, exact = red._integer_pair(n, 5)
        two = red.ablation_plan(n, 4, 1, 4)
        g, b = two.grid, two.block
        run_int, fetch_int, _ = red._warp_atomic_calls(d_int, n, g, b, make_barrier_then_warp_atomics)
        run_int()
        assert fetch_int() == exact, n
        runs = [("two passes", red._plan_calls(two, d_x)[0], None),
                ("warp atomics, 1 word", red._warp_atomic_calls(d_x, n, g, b)[0], red.make_warp_atomic(b)),
                ("warp atomics, 16 words", red._spread_atomic_calls(d_x, n, g, b)[0],
                 red.make_spread_atomic(b)),
                ("barrier, per-warp atomics", red._warp_atomic_calls(d_x, n, g, b,
                                                                     make_barrier_then_warp_atomics)[0],
                 make_barrier_then_warp_atomics(b)),
                ("no barrier, 1 per block", red._warp_atomic_calls(d_x, n, g, b, make_warp0_atomic_only)[0],
                 make_warp0_atomic_only(b)),
                ("block atomics, 1 word", red._block_atomic_calls(d_x, n, g, b)[0],
                 red.make_per_block_atomic(b))]
        for _, run, _ in runs:
            run()
        cuda.synchronize()
        rounds = {label: [] for label, _, _ in runs}
        for _ in range(3):
            for label, run, _ in runs:
                rounds[label].append(red._gpu_busy(run)["gpu_ms"] * 1e3)
        base = np.median(rounds["two passes"])
        for label, _, kernel in runs:
            r = rounds[label]
            print(f"n=2^{n.bit_length() - 1} grid {g}x{b} {label:26s} GPU busy {np.median(r):8.1f} us "
                  f"({np.median(r) - base:+6.1f} us; rounds {', '.join(f'{x:.1f}' for x in r)}) "
                  f"regs {regs(kernel) if kernel else '-'}", flush=True)


if __name__ == "__main__":
    main()
