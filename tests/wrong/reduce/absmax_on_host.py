"""Copies the whole vector back and takes the max with NumPy: right, but not a GPU reduction."""
import numpy as np

CHECKER = "check_absmax"


def kernel(d_x):
    return float(np.abs(d_x.copy_to_host()).max())
