"""copy_to_host with no destination: Numba allocates a pageable NumPy array, so the copy
back cannot overlap (and the host waits for it), as in the Numba article."""
from numba import cuda

from gpuperf.kernels.streams import add_kernel

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    streams = [cuda.stream() for _ in range(n_streams)]
    d_a, d_b, d_out = (cuda.device_array_like(x) for x in (a, b, out))
    for i in range(n_chunks):
        lo, hi = n * i // n_chunks, n * (i + 1) // n_chunks
        s = streams[i % n_streams]
        d_a[lo:hi].copy_to_device(a[lo:hi], stream=s)
        d_b[lo:hi].copy_to_device(b[lo:hi], stream=s)
        add_kernel[4, 64, s](d_a[lo:hi], d_b[lo:hi], d_out[lo:hi])
        out[lo:hi] = d_out[lo:hi].copy_to_host(stream=s)
    cuda.synchronize()
    return out
