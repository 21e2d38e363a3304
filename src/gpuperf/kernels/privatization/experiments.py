"""The privatization chapter's experiment.

``privatization_histogram``: every kernel (and ``cupy.bincount`` when present) on
64 MiB of uniform bytes and of skewed bytes (90% the same value, the worst case for
contention), in GB/s against the copy ceiling.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from gpuperf import bench
from gpuperf.records import experiment

from .checks import DISTRIBUTIONS, random_bytes, reference
from .kernels import NBINS, VERSIONS, launch

N_BYTES = 64 * 2**20


@functools.lru_cache(maxsize=1, typed=True)
def _zero_kernel():
    @cuda.jit
    def zero(hist):
        i = cuda.grid(1)
        if i < hist.size:
            hist[i] = 0

    return zero


def _cupy():
    try:
        import cupy
    except Exception:
        return None
    return cupy


@experiment("privatization_histogram", chapter="checklist",
            title="Histogram of 64 MiB of bytes: global atomics against per-block private "
                  "copies, uniform and skewed data",
            units={"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy", "pct_peak": "% of peak",
                   "speedup": "x"})
def histogram_experiment(progress):
    cp = _cupy()
    rows = []
    d_hist = cuda.device_array(NBINS, np.int32)
    zero = _zero_kernel()
    for dist in DISTRIBUTIONS:
        data = random_bytes(N_BYTES, dist, seed=5)
        ref = reference(data)
        d_data = cuda.to_device(data)
        base_ms = None
        for version in VERSIONS:
            def run(version=version, d_data=d_data):
                zero[1, NBINS](d_hist)
                launch(version, d_data, d_hist)

            t = bench.time_kernel(run, min_repeat=5, min_time=0.1)
            run()
            if not np.array_equal(d_hist.copy_to_host(), ref):
                raise AssertionError(f"histogram {version} is wrong on {dist} data")
            row = {"distribution": dist, "version": version,
                   **bench.bandwidth_row(N_BYTES, t)}
            base_ms = base_ms or t.median_ms
            row["speedup"] = base_ms / t.median_ms
            rows.append(row)
            progress(f"{dist:8s} {version:8s} {t.median_ms:8.3f} ms  {row['gbps']:.0f} GB/s")
        if cp is not None:
            c_data = cp.asarray(d_data)
            t = bench.time_kernel(lambda c_data=c_data: cp.bincount(c_data, minlength=NBINS),
                                  min_repeat=5, min_time=0.1)
            got = cp.asnumpy(cp.bincount(c_data, minlength=NBINS))
            if not np.array_equal(got, ref):
                raise AssertionError(f"cupy.bincount disagrees on {dist} data")
            rows.append({"distribution": dist, "version": "cupy.bincount",
                         **bench.bandwidth_row(N_BYTES, t), "speedup": base_ms / t.median_ms})
            progress(f"{dist:8s} cupy     {t.median_ms:8.3f} ms")
    return rows
