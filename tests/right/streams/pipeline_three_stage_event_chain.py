# ruff: noqa: E702  (a student answer, kept as written)
"""Correct: per buffer set an H2D, a compute and a D2H stream chained by events; the next chunk
of a set waits (on the device) only for the previous chunk's copy back, which itself waited
for the kernel, so the reuse is ordered transitively."""
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"
NOTEBOOK, LABEL = "07_streams", "ex-streams-bounded"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    h2d = [cuda.stream() for _ in range(n_streams)]
    comp = [cuda.stream() for _ in range(n_streams)]
    d2h = [cuda.stream() for _ in range(n_streams)]
    sets = [[cuda.device_array_like(a[:size]) for _ in range(3)] for _ in range(n_streams)]
    done = [None] * n_streams          # event: the set's previous chunk is copied back
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        k = i % n_streams
        da, db, do = (x[:hi - lo] for x in sets[k])
        if done[k] is not None:
            done[k].wait(h2d[k])       # whole previous chunk of this set finished
        da.copy_to_device(a[lo:hi], stream=h2d[k])
        db.copy_to_device(b[lo:hi], stream=h2d[k])
        landed = cuda.event(); landed.record(h2d[k]); landed.wait(comp[k])
        st.add_kernel[4, 64, comp[k]](da, db, do)
        added = cuda.event(); added.record(comp[k]); added.wait(d2h[k])
        do.copy_to_host(out[lo:hi], stream=d2h[k])
        done[k] = cuda.event(); done[k].record(d2h[k])
    cuda.synchronize()
    return out
