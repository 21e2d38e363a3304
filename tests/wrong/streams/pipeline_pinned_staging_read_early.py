"""Wrong: copies each chunk back into a per-stream pinned staging buffer and immediately does
out[lo:hi] = stage[:m] on the host, before the asynchronous copy back has landed (the final
synchronize comes too late)."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    streams = [cuda.stream() for _ in range(n_streams)]
    bufs = [[cuda.device_array(size, np.float32) for _ in range(3)] for _ in range(n_streams)]
    stage = [cuda.pinned_array(size, np.float32) for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        m = hi - lo
        k = i % n_streams
        s = streams[k]
        da, db, do = (x[:m] for x in bufs[k])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(stage[k][:m], stream=s)
        out[lo:hi] = stage[k][:m]
    cuda.synchronize()
    return out
