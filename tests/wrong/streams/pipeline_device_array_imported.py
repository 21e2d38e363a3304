"""The chapter's whole-array buffers, allocated with `from numba.cuda import device_array`
(a name imported before the checker starts watching)."""
import numpy as np
from numba import cuda
from numba.cuda import device_array

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    streams = [cuda.stream() for _ in range(n_streams)]
    da, db, do = device_array(n, np.float32), device_array(n, np.float32), device_array(n, np.float32)
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = streams[i % n_streams]
        da[lo:hi].copy_to_device(a[lo:hi], stream=s)
        db[lo:hi].copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](da[lo:hi], db[lo:hi], do[lo:hi])
        do[lo:hi].copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
