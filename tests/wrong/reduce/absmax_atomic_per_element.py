"""Wrong (issue 63, access pattern): a grid-stride loop in which every element goes straight into
one cuda.atomic.max on the device result: exact, but an atomic per element, serialized on one
address. Without a GPU no bandwidth is measured; the emulator counts the atomics."""
import math

import numpy as np
from numba import cuda

CHECKER = "check_absmax"


@cuda.jit
def absmax_atomics(x, result):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        cuda.atomic.max(result, 0, abs(x[i]))


def fn(d_x):
    result = cuda.to_device(np.zeros(1, dtype=np.float32))
    absmax_atomics[max(1, min(1024, math.ceil(d_x.size / 256))), 256](d_x, result)
    return float(result.copy_to_host()[0])


kernel = fn  # the name the reduce tests call an answer by
