"""FLOP per float loaded, not per byte."""

CHECKER = "check_tile_reuse"
MODULE = "gpuperf.kernels.coarsening"


def tile_reuse(bm, bn, tm, tn):
    return (bm // tm) * (bn // tn), 2 * bm * bn / (bm + bn), tm * tn / (tm + tn)
