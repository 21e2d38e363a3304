"""Wrong: 'streams' taken from cuda.per_thread_default_stream(), which is the same single
stream (CU_STREAM_PER_THREAD) every call from one host thread, so every chunk runs in one
queue and nothing overlaps."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    streams = [cuda.per_thread_default_stream() for _ in range(n_streams)]
    bufs = [[cuda.device_array(size, np.float32) for _ in range(3)] for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = streams[i % n_streams]
        da, db, do = (x[:hi - lo] for x in bufs[i % n_streams])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
