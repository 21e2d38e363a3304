"""Correct: the final wait polls an event recorded in each stream until it is done
(`event.query()`), as a host that does other work in between would."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"
NOTEBOOK, LABEL = "07_streams", "ex-streams-bounded"


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
        st.add_kernel[4, 64, s](da, db, do)
        do.copy_to_host(out[lo:hi], stream=s)
    done = []
    for s in streams:
        ev = cuda.event()
        ev.record(s)
        done.append(ev)
    for ev in done:
        while not ev.query():
            pass
    return out


my_pipeline = student  # the name the exercise asks for
