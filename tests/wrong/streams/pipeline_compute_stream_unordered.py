"""A copy stream and a compute stream per buffer set, but the kernel's stream does not wait for
the copies in (no event.wait): on a GPU the kernel can add before the inputs have landed."""
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    copies = [cuda.stream() for _ in range(n_streams)]
    kernels = [cuda.stream() for _ in range(n_streams)]
    sets = [[cuda.device_array_like(a[:size]) for _ in range(3)] for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        k = i % n_streams
        cs, ks = copies[k], kernels[k]
        da, db, do = (x[:hi - lo] for x in sets[k])
        da.copy_to_device(a[lo:hi], stream=cs)
        db.copy_to_device(b[lo:hi], stream=cs)
        st.add_kernel[4, 64, ks](da, db, do)
        added = cuda.event()
        added.record(ks)
        added.wait(cs)
        do.copy_to_host(out[lo:hi], stream=cs)
    cuda.synchronize()
    return out
