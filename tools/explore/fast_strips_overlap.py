"""Exploration for chapter 5's fast path made whole (review of 2026-11-28): do FastMatmul's
strips run beside the fast kernel, or after it? Numba's streams are blocking streams: they wait
for earlier work on the legacy default stream, so strips queued after a fast kernel launched
there start only when it ends. This times, at 4100^3 and 4104^3 (event timing, median):

- ``interior``: the fast kernel alone on the interior (and the k tail where K has one);
- ``strips``: the two strips alone (K split 16 ways, partials added in order), each on its stream;
- ``serial``: interior then strips, everything on the default stream;
- ``call``: FastMatmul's call as it is in the package.

If ``call`` is about ``interior + strips`` the strips do not overlap; about ``interior`` (or
between) they do. Run on a GPU from the repository root:
PYTHONPATH=src python3 tools/explore/fast_strips_overlap.py
"""
from numba import cuda

from gpuperf import bench
from gpuperf.kernels import coarsening as co
from gpuperf.kernels import matmul as mm


def measure(f, n):
    A, B, C = mm.device_operands(n, n, n)
    mi, ni, ki = n // f.bm * f.bm, n // f.bn * f.bn, n // f.bk * f.bk
    f(A, B, C)  # compiles everything and makes the streams
    cuda.synchronize()
    _, right, bottom = f._streams

    def interior(stream=0):
        f.fast[(ni // f.bn, mi // f.bm), f.threads, stream](A, B, C)
        if ki < n:
            co._add_k_tail[co._cdiv(mi * ni, 256), 256, stream](A, B, C, mi, ni, ki)

    def strips(r=right, b=bottom):
        f._strip(A, B, C, 0, ni, n, n - ni, r)
        f._strip(A, B, C, mi, 0, n - mi, ni, b)

    def serial():
        interior()
        strips(0, 0)

    runs = {"interior": interior, "strips": strips, "serial": serial, "call": lambda: f(A, B, C)}
    return {k: bench.time_kernel(fn, warmup=2, min_repeat=20, min_time=0.3).median_ms
            for k, fn in runs.items()}


def main():
    f = co.fast_matmul()
    for n in (4100, 4104):
        ms = measure(f, n)
        print(f"n={n}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in ms.items())
              + f"; interior + strips {ms['interior'] + ms['strips']:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
