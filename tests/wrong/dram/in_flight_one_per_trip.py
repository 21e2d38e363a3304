"""Wrong for this exercise (issue 63, access pattern): a plain grid-stride copy, coalesced and
right, but one load per loop trip: with this few threads, Little's law is not met. Without a
GPU no speed is measured; the emulator counts the loads each thread makes before it stores."""
from numba import cuda

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    i = cuda.grid(1)
    while i < src.shape[0]:
        dst[i] = src[i]
        i += cuda.gridsize(1)
