"""Can a transpose reach 90% of the copy ceiling on an H200 (issue 18)? A sweep of the tiled
kernel's shapes, and a 64 x 64 tile moved with 16-byte loads and stores.

``make_transpose_vec4(R)``: block (16, R). Each thread reads a 16-byte piece of a tile row
(``load4``), and writes a 16-byte piece of an output row (``store4``): four consecutive tile rows
at one tile column, gathered from shared memory with four 4-byte reads. Shared memory is the
64 x 65 padded tile with one more twist: bit 1 of the column is flipped where the row's half
(r >> 5) and the column's half (j >> 5) differ. With padding alone, lanes tx and tx + 8 of a
half-warp (columns 32 apart, or rows 32 apart on the way out) land on one bank: 2-way conflicts on
every shared access. The flip separates them; ``bank_conflicts(R)`` below checks every warp,
phase and k exhaustively, for every block shape, before anything runs.

Measured on an NVIDIA H200 (2026-11-28, 16384 x 16384, GB/s with the copy of the same bytes
timed beside each; the percentages are of the device-to-device copy ceiling that
gpuperf.bench measured in the same process):

  tiled 32x32, block (32, 4): 2992 (70.1%)   block (32, 2): 2776 (65.0%)
  tiled 64x64, block (32, 8): 3641 (85.3%)   (32, 4): 3752 (87.9%)   (32, 2): 3418   (32, 1): 2885
  vec4 64x64, block (16, 16): 4033 (94.5%)   (16, 8): 4029 (94.4%)   (16, 4): 3933 (92.2%)
  package make_transpose_vec4(8), flip: 4029 (94.4%), no flip: 4025 (94.3%)

Fewer threads per block with more elements each stops paying past 32 per thread with 4-byte
accesses; 16-byte accesses gain about 7% over the best of those. A first package version that
tested ``wide`` inside the store loop (not outside it) measured 3898 GB/s (91.4%) in the record.

Run on a GPU:  PYTHONPATH=src python tools/explore/transpose_vec4.py [vec4]
"""
import sys

import numpy as np
from numba import cuda, float32  # noqa: I001

from gpuperf import SIMULATOR, bench  # first: it picks the simulator where there is no GPU
from gpuperf.kernels import coalescing as co
from gpuperf.vector import load4, store4

TILE = 64


def shared_col(r, j):
    """Where tile element (r, j) lives in its row of the 64 x 65 shared tile."""
    return j ^ ((((r >> 5) ^ (j >> 5)) & 1) << 1)


def bank_conflicts(R):
    """The worst number of distinct words a warp asks of one bank, over both phases."""
    worst = 1
    for w in range(R // 2):
        for i in range(TILE // R):
            for k in range(4):
                for phase in (0, 1):
                    banks = {}
                    for lane in range(32):
                        tx, ty = lane % 16, 2 * w + lane // 16
                        r, j = (ty + i * R, 4 * tx + k) if phase == 0 else (4 * tx + k, ty + i * R)
                        a = r * (TILE + 1) + shared_col(r, j)
                        banks.setdefault(a % 32, set()).add(a)
                    worst = max(worst, max(len(s) for s in banks.values()))
    return worst


def make_transpose_vec4(R):
    PER = TILE // R
    SHAPE = (TILE, TILE + 1)  # a closure constant: shared.array needs a literal shape

    @cuda.jit
    def transpose_vec4(a, out):
        t = cuda.shared.array(SHAPE, float32)
        regs = cuda.local.array((PER, 4), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        r0 = cuda.blockIdx.y * TILE
        c0 = cuda.blockIdx.x * TILE
        for i in range(PER):  # all loads first
            v0, v1, v2, v3 = load4(a, r0 + ty + i * R, c0 + 4 * tx)
            regs[i, 0] = v0
            regs[i, 1] = v1
            regs[i, 2] = v2
            regs[i, 3] = v3
        for i in range(PER):
            r = ty + i * R
            for k in range(4):
                j = 4 * tx + k
                t[r, j ^ ((((r >> 5) ^ (j >> 5)) & 1) << 1)] = regs[i, k]
        cuda.syncthreads()
        for i in range(PER):
            c = ty + i * R  # a tile column: a row of out
            r = 4 * tx  # four tile rows: four columns of out
            h = (c >> 5) & 1
            x0 = t[r, c ^ ((((r >> 5) ^ h) & 1) << 1)]
            x1 = t[r + 1, c ^ (((((r + 1) >> 5) ^ h) & 1) << 1)]
            x2 = t[r + 2, c ^ (((((r + 2) >> 5) ^ h) & 1) << 1)]
            x3 = t[r + 3, c ^ (((((r + 3) >> 5) ^ h) & 1) << 1)]
            store4(out, c0 + c, r0 + r, x0, x1, x2, x3)

    return transpose_vec4


def main():
    for R in (2, 4, 8, 16, 32, 64):
        assert bank_conflicts(R) == 1, R
    n = 128 if SIMULATOR else co.N_TRANSPOSE
    a = co._device_data(n * n).reshape(n, n)
    out = cuda.device_array((n, n), np.float32)
    host = a.copy_to_host()
    nbytes = 2 * 4 * n * n
    flat_a, flat_out = a.reshape(n * n), out.reshape(n * n)
    grid, block = co.copy_launch(n * n, version="vec4", ilp=1, blocks_per_sm=None)
    copy = co.make_copy_vec4(1)
    runs = []
    for label, kernel, blk in (
            [(f"tiled {tile}x{tile} pad 1, block ({min(tile, 32)}, {br})",
              co.make_transpose(tile, br, 1, True), (min(tile, 32), br))
             for tile, br in (((64, 4),) if "vec4" in sys.argv else
                              ((32, 4), (32, 2), (64, 8), (64, 4), (64, 2), (64, 1)))]
            + [(f"vec4 64x64, block (16, {R})", make_transpose_vec4(R), (16, R)) for R in (16, 8, 4)]
            + [(f"package vec4 64x64, flip={f}, block (16, 8)", co.make_transpose_vec4(8, f), (16, 8))
               for f in (True, False)] + [("vec4 64x64 again, block (16, 8)", make_transpose_vec4(8), (16, 8))]):
        tile = 64 if "64" in label else 32
        g = (n // tile, n // tile)
        co.fill_pseudorandom[264, 256](flat_out, 99)
        kernel[g, blk](a, out)
        got = out.copy_to_host()
        ok = np.array_equal(got, host.T)
        if SIMULATOR:  # correctness only: the simulator's timings mean nothing
            print(f"{label:34s} correct={ok}")
            runs.append((label, ok))
            continue
        ts = [co._time_launch(kernel, g, blk, a, out, min_time=0.2) for _ in range(2)]
        tc = co._time_launch(copy, grid, block, flat_a, flat_out, min_time=0.2)
        gb = [bench.bandwidth_row(nbytes, t)["gbps"] for t in ts]
        gc = bench.bandwidth_row(nbytes, tc)["gbps"]
        runs.append((label, ok, gb, gc))
        print(f"{label:34s} correct={ok}  {gb[0]:7.0f} {gb[1]:7.0f} GB/s   copy beside {gc:7.0f}   "
              f"ratio {max(gb) / gc:.3f}  ({bench.bandwidth_row(nbytes, ts[0])['pct_copy']:.1f}% of the ceiling)",
              flush=True)
    return 0 if all(r[1] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
