"""Shared loads per multiply-add, the inverse of what is asked."""

CHECKER = "check_tile_reuse"
MODULE = "gpuperf.kernels.coarsening"


def tile_reuse(bm, bn, tm, tn):
    return (bm // tm) * (bn // tn), 2 * bm * bn / (4 * (bm + bn)), (tm + tn) / (tm * tn)
