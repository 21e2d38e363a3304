"""Chunk-sized buffers, but new ones for every chunk (cuda.to_device per chunk): the device
memory used grows with the number of chunks, and each allocation costs host time."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    queues = [cuda.stream() for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = n * i // n_chunks, n * (i + 1) // n_chunks
        s = queues[i % n_streams]
        d_a = cuda.to_device(a[lo:hi], stream=s)
        d_b = cuda.to_device(b[lo:hi], stream=s)
        d_out = cuda.device_array(hi - lo, np.float32)
        st.add_kernel[4, 64, s](d_a, d_b, d_out)
        d_out.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
