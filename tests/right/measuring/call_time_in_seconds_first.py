"""Correct: everything in seconds first, then converted, with numpy scalars."""
import numpy as np

NOTEBOOK, LABEL = "01_measuring", "ex-measuring-call-time"


def copy_call_us(n, launch_us, gbps):
    seconds = np.float64(launch_us) * 1e-6 + (np.int64(n) * 8) / (np.float64(gbps) * 1e9)
    return seconds * 1e6
