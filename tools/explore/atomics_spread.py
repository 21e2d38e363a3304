"""Exploration for chapter 6.2's warp-atomics ablation (the review's question: is the warp
atomics' extra GPU time contention on one word, or the number of atomics?). Not part of the
course yet. Same loads, grid and zeroing launch as ``reduce.make_warp_atomic``; one atomic per
warp into 1 word, into 16 or 64 words on separate 128-byte lines; one atomic per block into 1
word (``make_per_block_atomic``). GPU busy time per call (CUPTI), against v8's two passes. Run
on a GPU from the repository root: PYTHONPATH=src python3 tools/explore/atomics_spread.py

First run, NVIDIA H100 80GB HBM3, 2026-11-27, numba-cuda 0.30.4 (grid 512 or 528 x 512):

    floats   warp, 1 word   warp, 16 words   warp, 64 words   block, 1 word
    2^20     +11.7 us       -0.5 us          -0.8 us          -0.8 us
    2^24     +8.2 us        +0.2 us          +0.0 us          -0.7 us
    2^28     +4.9 us        +4.1 us          +4.3 us          +0.1 us

Up to 2^24 the excess is contention on the one word: the same 8,192-8,448 atomics spread over 16
words cost nothing. At 2^28 a smaller excess stays when they are spread and goes only with 16x
fewer atomics (one per block): there it follows the number of atomics, not the address.

Later (H200 record of reduce_single_pass, with this control as its row): that last reading does
not hold. The grid is the same 528 blocks at 2^24 and 2^28, so the spread atomics are the same
8,448 at both sizes, and cost about nothing at 2^24; what grows at 2^28 is not separated yet (the
end of the kernel differs too: one atomic per block adds a barrier and shared memory).
"""
from numba import cuda

from gpuperf.kernels import reduce as red


def calls(d_x, n, grid, block, words):
    """``(run, fetch)``: the package's spread control (``reduce.make_spread_atomic``, which this
    exploration became), with ``words`` words."""
    return red._spread_atomic_calls(d_x, n, grid, block, words)[:2]


rows = []
for n in (2**20, 2**24, 2**28):
    d_x, ref = red._random_device(n)
    d_int, exact = red._integer_pair(n, 5)
    two = red.ablation_plan(n, 4, 1, 4)
    runs = [("two passes", red._plan_calls(two, d_x)[0])]
    runs.append(("warp atomics, 1 word", red._warp_atomic_calls(d_x, n, two.grid, two.block)[0]))
    for words in (16, 64):
        run, fetch = calls(d_int, n, two.grid, two.block, words)
        run()
        assert fetch() == exact, (n, words)
        runs.append((f"warp atomics, {words} words", calls(d_x, n, two.grid, two.block, words)[0]))
    runs.append(("block atomics, 1 word", red._block_atomic_calls(d_x, n, two.grid, two.block)[0]))
    for _, run in runs:
        run()
    cuda.synchronize()
    busy = {label: red._gpu_busy(run)["gpu_ms"] for label, run in runs}
    base = busy["two passes"]
    for label, _ in runs:
        print(f"n=2^{n.bit_length()-1} grid {two.grid}x{two.block} {label:24s} GPU busy "
              f"{busy[label]*1e3:7.1f} us ({(busy[label]-base)*1e3:+6.1f} us)", flush=True)
