"""Double buffering done by chunk parity: chunk i uses buffer set i % 2 but runs in stream
i % n_streams. With more than two streams, chunks 0 and 2 share buffers in different streams,
and nothing makes chunk 2's copy in wait for chunk 0's copy back."""
import numpy as np
from numba import cuda

from gpuperf.kernels import streams as st

CHECKER = "check_pipeline"


def student(a, b, out, n_streams, n_chunks):
    n = a.size
    n_chunks = min(n_chunks, n)
    size = -(-n // n_chunks)
    queues = [cuda.stream() for _ in range(n_streams)]
    sets = [[cuda.device_array(size, np.float32) for _ in range(3)]
            for _ in range(min(2, n_streams))]
    for i in range(n_chunks):
        lo, hi = n * i // n_chunks, n * (i + 1) // n_chunks
        s = queues[i % n_streams]
        d_a, d_b, d_out = (buf[:hi - lo] for buf in sets[i % len(sets)])
        d_a.copy_to_device(a[lo:hi], stream=s)
        d_b.copy_to_device(b[lo:hi], stream=s)
        st.add_kernel[4, 64, s](d_a, d_b, d_out)
        d_out.copy_to_host(out[lo:hi], stream=s)
    cuda.synchronize()
    return out
