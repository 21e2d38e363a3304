"""Wrong: a bounded pipeline whose own kernel is launched as one block of chunk-size threads
(threadIdx.x only, no block offset, no grid-stride loop). A block has at most 1024 threads, so
every chunk longer than that fails to launch on a GPU (the exercise's 2^24 floats in 16 chunks
are about a million each). The checker's largest chunk under the simulator is 333 elements (the
simulator now refuses blocks over 1024 threads, as a GPU does); on a GPU the timed case catches
it. The case that closes it is in tools/device/pending-session10.patch.
Found by a reviewer playing a student (session 9)."""
import numpy as np
from numba import cuda

CHECKER = "check_pipeline"
EXPECT = "reject"


@cuda.jit
def add(a, b, out):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n, n_chunks)
    size = -(-n // n_chunks)
    streams = [cuda.stream() for _ in range(n_streams)]
    bufs = [[cuda.device_array(size, np.float32) for _ in range(3)] for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = n * i // n_chunks, n * (i + 1) // n_chunks
        s = streams[i % n_streams]
        da, db, do = (x[:hi - lo] for x in bufs[i % n_streams])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        add[1, hi - lo, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
