"""Correct: the three quantities from exact fractions, converted at the end."""
from fractions import Fraction

NOTEBOOK, LABEL = "05_register_tiling", "ex-coarsening-tile-reuse"


def tile_reuse(bm, bn, tm, tn):
    threads = (bm * bn) // (tm * tn)
    flop_per_byte = Fraction(2 * bm * bn, 4 * (bm + bn))
    return threads, float(flop_per_byte), float(Fraction(tm * tn, tm + tn))
