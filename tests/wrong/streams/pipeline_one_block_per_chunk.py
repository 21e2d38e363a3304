"""Wrong: a bounded pipeline whose own kernel is launched as one block of chunk-size threads
(threadIdx.x only, no block offset, no grid-stride loop). A block has at most 1024 threads, so
every chunk longer than that fails to launch on a GPU (the exercise's 2^24 floats in 16 chunks
are about a million each). Found by a reviewer playing a student (session 9): the checker's
chunks were all under 1024 elements and the simulator ran blocks of any size. Now the simulator
refuses such a launch, as a GPU does, and one case has chunks of 1300."""
import numpy as np
from numba import cuda

CHECKER = "check_pipeline"


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
