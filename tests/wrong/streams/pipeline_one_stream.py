"""Creates n_streams streams but issues every chunk on the first: the chunks run in order."""
from numba import cuda

from gpuperf.kernels.streams import add_kernel

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    streams = [cuda.stream() for _ in range(n_streams)]
    size = -(-n // n_chunks)
    bufs = [[cuda.device_array(size, a.dtype) for _ in range(3)] for _ in range(n_streams)]
    for i in range(n_chunks):
        lo, hi = n * i // n_chunks, n * (i + 1) // n_chunks
        d_a, d_b, d_out = (x[:hi - lo] for x in bufs[0])
        s = streams[0]
        d_a.copy_to_device(a[lo:hi], stream=s)
        d_b.copy_to_device(b[lo:hi], stream=s)
        add_kernel[4, 64, s](d_a, d_b, d_out)
        d_out.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
