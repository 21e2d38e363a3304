"""Correct: the final wait is `cuda.current_context().synchronize()`."""
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"
NOTEBOOK, LABEL = "07_streams", "ex-streams-bounded"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    streams = [cuda.stream() for _ in range(n_streams)]
    bufs = [tuple(cuda.device_array_like(a[:size]) for _ in range(3)) for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = streams[i % n_streams]
        da, db, do = (x[:hi - lo] for x in bufs[i % n_streams])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    cuda.current_context().synchronize()
    return out


my_pipeline = student  # the name the exercise asks for
