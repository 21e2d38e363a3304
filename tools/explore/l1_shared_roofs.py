"""How fast can the SMs read shared memory and the L1 cache (issue 18: "L1 and shared-memory
roofs" for chapter 4's hierarchical roofline)? Four read kernels, each one full wave of blocks:

* ``shared 4 B``: every thread reads a 16 KiB shared buffer one float at a time, a warp's 32
  lanes on 32 consecutive words (one wavefront, no bank conflict), ``READS`` times.
* ``shared 16 B``: the same buffer read 16 bytes per lane (``load4``: LDS.128, four wavefronts
  per warp instruction).
* ``L1 4 B`` / ``L1 16 B``: the same pattern on a 16 KiB *global* buffer that every block reads
  (after the first touch it stays in each SM's L1: global loads are cached in L1 by default).

Each read's address moves with the loop counter by a runtime step, so the compiler cannot hoist
a load out of the loop; each thread adds what it reads and stores the sum, and the sums are
checked against NumPy (small whole numbers: float32 adds them exactly). The theoretical roof
for both is 128 bytes per clock per SM (32 banks of 4 bytes; the L1 and shared memory are one
array on this architecture) x SMs x the SM clock the driver reports (a GPU under load may run
below it). With ``ncu`` on the PATH and ``--ncu``, Nsight Compute's L1 hit rate and shared
wavefronts per instruction confirm where each kernel's bytes came from.

Measured on an NVIDIA H200 (2026-11-28, one run; 132 SMs, driver clock 1980 MHz, so the roof is
33,454 GB/s; Nsight Compute locks the clock lower, so its columns are ratios, not rates):

  kernel        GB/s     % of roof   ncu: shared-pipe busy  L1 hit  issue slots busy  instr/load
  shared 4 B    23,908   71.5        71.6%                  -       90.2%             5.0
  shared 16 B   32,762   97.9        98.0%                  -       48.2%             7.9
  L1 4 B        17,516   52.4        -                      99.99%  92.2%             7.0
  L1 16 B       32,390   96.8        -                      100%    59.8%             9.9

(spread 0.1-0.2% each; every kernel executed the 276,824,064 warp-level loads it should.) With
16-byte loads both reach 97-98% of 128 B/clk/SM: those are the shared-memory and L1 roofs. With
4-byte loads the SMs' issue slots are 90-92% busy (five to seven instructions per load: the
index arithmetic, the load, the add), so the instruction stream, not the memory, sets the rate.
A 16-byte load moves four times the bytes for 1.4-1.6x the instructions, and the issue slots
are then half idle while the shared pipe or L1 runs at its roof.

Run on a GPU:  PYTHONPATH=src python tools/explore/l1_shared_roofs.py [--ncu]
"""
import os  # noqa: I001  (gpuperf before numba: it picks the simulator where there is no GPU)
import subprocess
import sys

import numpy as np

from gpuperf import SIMULATOR, bench, device  # first: it picks the simulator without a GPU
from gpuperf.vector import load4, load_float4
from numba import cuda, float32

WORDS = 4096          # 16 KiB of float32
MASK = WORDS - 1
VECS = WORDS // 4     # 16-byte slots
BLOCK = 512
UNROLL = 8
# The unrolled reads of one trip must hit UNROLL distinct slots: equal addresses would be
# loaded once (a first version used 512 for both widths; in the 1024 16-byte slots k and k + 2
# coincided, the compiler kept a quarter of the loads, and the rate read 4x too high).
WORD_STRIDE = WORDS // UNROLL
VEC_STRIDE = VECS // UNROLL


def _values():
    return (np.arange(WORDS) % 7 + 1).astype(np.float32)


@cuda.jit
def shared_read4(src, reads, step, out):
    sh = cuda.shared.array(WORDS, float32)
    t = cuda.threadIdx.x
    for i in range(t, WORDS, cuda.blockDim.x):
        sh[i] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(UNROLL):  # lanes of a warp on consecutive words: one wavefront each
            acc += sh[(base + k * WORD_STRIDE) & MASK]
        r += UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def shared_read16(src, reads, step, out):
    sh = cuda.shared.array((VECS, 4), float32)
    t = cuda.threadIdx.x
    for i in range(t, WORDS, cuda.blockDim.x):
        sh[i // 4, i % 4] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    rows = VECS - 1
    while r < reads:
        base = t + r * step
        for k in range(UNROLL):
            a, b, c, d = load4(sh, (base + k * VEC_STRIDE) & rows, 0)
            acc += (a + b) + (c + d)
        r += UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read4(src, reads, step, out):
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(UNROLL):
            acc += src[(base + k * WORD_STRIDE) & MASK]
        r += UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read16(src, reads, step, out):
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    vecs = VECS - 1
    while r < reads:
        base = t + r * step
        for k in range(UNROLL):
            a, b, c, d = load_float4(src, 4 * ((base + k * VEC_STRIDE) & vecs))
            acc += (a + b) + (c + d)
        r += UNROLL
    out[cuda.grid(1)] = acc


KERNELS = {"shared 4 B": (shared_read4, 4, WORDS), "shared 16 B": (shared_read16, 16, VECS),
           "L1 4 B": (l1_read4, 4, WORDS), "L1 16 B": (l1_read16, 16, VECS)}


def expected(width, slots, reads, step, block, blocks):
    """Each thread's sum, from the same addresses in NumPy (float64: the float32 sums of
    small whole numbers are exact below 2^24)."""
    v = _values().astype(np.float64)
    per = v.reshape(-1, 4).sum(1) if width == 16 else v
    t = np.arange(block)[:, None]
    idx = np.concatenate([(t + r * step + k * (slots // UNROLL)) & (slots - 1)
                          for r in range(0, reads, UNROLL) for k in range(UNROLL)], axis=1)
    return np.tile(per[idx].sum(1), blocks)


def main():
    use_ncu = "--ncu" in sys.argv
    block = 64 if SIMULATOR else BLOCK
    blocks = 2 if SIMULATOR else device.sm_count() * (2048 // BLOCK)
    reads = 16 if SIMULATOR else 32768
    step = 32 * 3  # a runtime step: a warp stays on 32 consecutive slots (mod the buffer)
    src = cuda.to_device(_values())
    out = cuda.device_array(block * blocks, np.float32)
    clock = device.sm_clock_khz()
    sms = device.sm_count()
    roof = sms * 128 * clock * 1e3 / 1e9 if clock else None  # GB/s
    print(f"{device.info().name}: {sms} SMs, SM clock {clock} kHz (driver), "
          f"roof 128 B/clk/SM = {roof:,.0f} GB/s" if roof else "simulator: correctness only")
    rows = []
    for name, (kernel, width, slots) in KERNELS.items():
        if os.environ.get("ONLY") and os.environ["ONLY"] not in name:
            continue
        kernel[blocks, block](src, reads, step, out)
        got = out.copy_to_host()
        want = expected(width, slots, min(reads, 64) if not SIMULATOR else reads, step, block,
                        blocks) if SIMULATOR else None
        if SIMULATOR:
            assert np.array_equal(got, want), name
            print(f"{name}: sums match NumPy")
            continue
        small = 64  # check the sums at a small read count (exact in float32)
        kernel[blocks, block](src, small, step, out)
        assert np.array_equal(out.copy_to_host(),
                              expected(width, slots, small, step, block, blocks)), name
        t = bench.time_kernel(lambda k=kernel: k[blocks, block](src, reads, step, out))
        nbytes = blocks * block * reads * width
        gbps = nbytes / (t.median_ms * 1e-3) / 1e9
        rows.append((name, gbps, t.spread))
        print(f"{name:12s} {gbps:10,.0f} GB/s  {100 * gbps / roof:5.1f}% of the roof  "
              f"(spread {t.spread:.1%})", flush=True)
    if use_ncu and not SIMULATOR and not os.environ.get("ONLY"):
        metrics = ("l1tex__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,"
                   "smsp__inst_executed_op_shared_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,"
                   "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,"
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,"
                   "sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,"
                   "smsp__issue_active.avg.pct_of_peak_sustained_elapsed")
        print(f"each kernel should execute {blocks * block // 32 * reads:,} warp-level load "
              "instructions (shared or global): fewer means the compiler merged loads")
        for name in KERNELS:
            print(f"== ncu {name}", flush=True)
            r = subprocess.run(["ncu", "--metrics", metrics, "-k", "regex:read", "-c", "1",
                                "--launch-skip", "2", sys.executable, __file__],
                               env={**os.environ, "ONLY": name}, capture_output=True, text=True)
            print("\n".join(line for line in r.stdout.splitlines()
                            if any(m.split(".")[0] in line for m in metrics.split(",")))
                  or r.stdout[-2000:] + r.stderr[-2000:])


if __name__ == "__main__":
    main()
