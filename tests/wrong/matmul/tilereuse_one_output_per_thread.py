"""One thread per output of the block tile, as in the tiled kernel."""

CHECKER = "check_tile_reuse"
MODULE = "gpuperf.kernels.coarsening"


def tile_reuse(bm, bn, tm, tn):
    return bm * bn, 2 * bm * bn / (4 * (bm + bn)), tm * tn / (tm + tn)
