"""Counts a multiply-add as one FLOP: the intensity comes out half."""

CHECKER = "check_tile_reuse"
MODULE = "gpuperf.kernels.coarsening"


def tile_reuse(bm, bn, tm, tn):
    return (bm // tm) * (bn // tn), bm * bn / (4 * (bm + bn)), tm * tn / (tm + tn)
