"""Wrong for this exercise (issue 63, access pattern): four loads in flight per thread, but of
the thread's own four neighbouring elements (4i .. 4i + 3), so each warp's load spans 512
bytes of which it uses a quarter. Right values; the emulator counts the sectors."""
from numba import cuda

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    n = src.shape[0]
    step = 4 * cuda.gridsize(1)
    i = 4 * cuda.grid(1)
    while i + 3 < n:
        a, b, c, e = src[i], src[i + 1], src[i + 2], src[i + 3]
        dst[i], dst[i + 1], dst[i + 2], dst[i + 3] = a, b, c, e
        i += step
    for j in range(i, min(i + 4, n)):
        dst[j] = src[j]
