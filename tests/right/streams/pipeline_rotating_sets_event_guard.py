"""Correct: n_streams buffer sets handed out in rotation (set (i + i//n_streams) % n_streams),
so a set passes from one stream to another; before reusing a set, the new stream waits
(event.wait) on an event recorded after the set's last copy back."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"
NOTEBOOK, LABEL = "07_streams", "ex-streams-bounded"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    streams = [cuda.stream() for _ in range(n_streams)]
    sets = [[cuda.device_array(size, np.float32) for _ in range(3)] for _ in range(n_streams)]
    free = [None] * n_streams
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = streams[i % n_streams]
        k = (i + i // n_streams) % n_streams
        if free[k] is not None:
            free[k].wait(s)
        da, db, do = (x[:hi - lo] for x in sets[k])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
        free[k] = cuda.event()
        free[k].record(s)
    cuda.synchronize()
    return out
