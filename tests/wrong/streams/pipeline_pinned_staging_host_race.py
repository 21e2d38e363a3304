"""Wrong: stages each input chunk through a per-stream pinned host buffer (stage[:m] =
a[lo:hi], then an async copy from stage); the host refills a stream's staging buffer for
chunk i+n_streams without waiting, while chunk i's asynchronous copy from it may not have
run yet."""
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
    stage = [[cuda.pinned_array(size, np.float32) for _ in range(2)] for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        m = hi - lo
        k = i % n_streams
        s = streams[k]
        da, db, do = (x[:m] for x in bufs[k])
        ha, hb = (x[:m] for x in stage[k])
        ha[:] = a[lo:hi]
        hb[:] = b[lo:hi]
        da.copy_to_device(ha, stream=s)
        db.copy_to_device(hb, stream=s)
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
