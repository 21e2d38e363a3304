"""Does the row pitch set the fast kernel's time at 4100 and 4104, or is it the k tail?

Measured on an NVIDIA H200 (2026-11-28, one run, numba-cuda 0.30.4), after chapter 5's second
review guessed that rows 16,400 bytes apart (4100 floats, not a multiple of the 32-byte sector)
slow the interior at 4100. Two answers:

* The pitch, alone: the fast kernel on the same 4096 x 4096 outputs over 512 k-tiles (513 where
  K = 4104), with A's pitch K and B's and C's pitch N varied. Medians of two timings each:
  K, N = 4096, 4096: 3.300 ms; 4100, 4096: 3.293; 4104, 4096: 3.280; 4096, 4100: 3.303;
  4096, 4104: 3.301; 4100, 4100: 3.297; 4104, 4104: 3.279; 4112: 3.290; 4128: 3.312.
  Under 1% from 4096 either way: not the pitch.
* The k tail: 4104 = 513 x 8 has none; 4100 = 512 x 8 + 4 has a tail of 4 products per output,
  a second launch (``_add_k_tail``) that reads and writes all of C:
  n=4100: interior 3.489 ms = fast kernel alone 3.297 + tail alone 0.197 (6% of the interior);
  n=4104: interior 3.280 ms, fast kernel alone 3.277, no tail.
  The tail moves about 128 MiB (C read and written) in 0.197 ms, about 0.7 TB/s, a sixth of
  what a copy reaches on this GPU: a kernel worth making faster (vector loads and stores of C,
  no 64-bit division per thread), or avoiding (pad K to a multiple of BK as K % 4 is padded).

After the k tail was vectorized (four outputs per thread, 16-byte loads and stores of B and C,
a 2-D grid): ``python tools/explore/fast_pitch_tail.py tail`` runs the second part alone.

Run on a GPU:  PYTHONPATH=src python tools/explore/fast_pitch_tail.py [tail]
"""
import sys

import numpy as np
from numba import cuda
import gpuperf as gp
from gpuperf import bench
from gpuperf.kernels import coarsening as co
f = co.fast_matmul()
rows = []
for K, N in () if "tail" in sys.argv else ((4096, 4096), (4100, 4096), (4104, 4096), (4096, 4100), (4096, 4104), (4100, 4100), (4104, 4104), (4112, 4112), (4128, 4128)):
    A = cuda.to_device(np.random.default_rng(1).standard_normal((4096, K)).astype(np.float32))
    B = cuda.to_device(np.random.default_rng(2).standard_normal((K, N)).astype(np.float32))
    C = cuda.device_array((4096, N), np.float32)
    run = lambda: f.fast[(32, 32), f.threads](A, B, C)
    run(); cuda.synchronize()
    ts = [bench.time_kernel(run, warmup=2, min_repeat=20, min_time=0.3) for _ in range(2)]
    print(f"K pitch {K} ({K*4} B, {K*4 % 32} past 32 B)  N pitch {N} ({N*4 % 32}): "
          + ", ".join(f"{t.median_ms:.4f} ms (spread {t.spread:.4f})" for t in ts), flush=True)
# The k tail alone at 4100, and the interior (fast kernel + tail) at 4100 and 4104, in this run.
from gpuperf.kernels import matmul as mm
for n in (4100, 4104):
    A, B, C = mm.device_operands(n, n, n)
    f(A, B, C); cuda.synchronize()
    t_int = bench.time_kernel(lambda: f._interior(A, B, C, 0), warmup=2, min_repeat=20, min_time=0.3)
    t_fast = bench.time_kernel(lambda: f.fast[(32, 32), f.threads](A, B, C), warmup=2, min_repeat=20, min_time=0.3)
    t_tail = bench.time_kernel(lambda: co._add_k_tail[(16, 1024), (64, 4)](A, B, C, 4096, 4096, 4096), warmup=2, min_repeat=20, min_time=0.3) if n % 8 else None
    print(f"n={n}: interior {t_int.median_ms:.4f} ms, fast kernel alone {t_fast.median_ms:.4f} ms, tail alone "
          + (f"{t_tail.median_ms:.4f} ms" if t_tail else "none"), flush=True)
