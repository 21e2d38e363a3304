"""Its own add kernel writes one output buffer shared by every stream."""
import numpy as np
from numba import cuda

CHECKER = "check_pipeline"


@cuda.jit
def my_add(x, y, z):
    for i in range(cuda.grid(1), z.size, cuda.gridsize(1)):
        z[i] = x[i] + y[i]

def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    streams = [cuda.stream() for _ in range(n_streams)]
    bufs = [[cuda.device_array(size, np.float32) for _ in range(2)] for _ in range(n_streams)]
    d_out = cuda.device_array(size, np.float32)      # one output buffer for all streams
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = streams[i % n_streams]
        da, db = (x[:hi - lo] for x in bufs[i % n_streams])
        do = d_out[:hi - lo]
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        my_add[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
