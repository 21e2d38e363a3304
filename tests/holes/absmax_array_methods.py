"""Wrong: d_x.max() and d_x.min() - NumPy methods the simulator's device array forwards to the
NumPy array it wraps: the work happens on the host (a GPU's DeviceNDArray has no max/min at
all)."""
CHECKER = "check_absmax"
MODULE = "gpuperf.kernels.reduce"
EXPECT = "reject"


def fn(d_x):
    return float(max(d_x.max(), -d_x.min()))
