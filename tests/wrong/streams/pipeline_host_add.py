"""Copies every chunk to the device and back, on its stream, but adds on the host with NumPy:
no kernel does the work."""
from numba import cuda

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    queues = [cuda.stream() for _ in range(n_streams)]
    sets = [[cuda.device_array_like(a[:size]) for _ in range(2)] for _ in queues]
    for i in range(n_chunks):
        lo, hi = i * n // n_chunks, (i + 1) * n // n_chunks
        s = queues[i % n_streams]
        da, db = (x[:hi - lo] for x in sets[i % n_streams])
        da.copy_to_device(a[lo:hi], stream=s)
        db.copy_to_device(b[lo:hi], stream=s)
        da.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    out[:] = a + b
    return out
