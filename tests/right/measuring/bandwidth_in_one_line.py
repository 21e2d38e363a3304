"""Correct: the same formula with the units folded together (bytes / ms / 1e6 = GB/s)."""
NOTEBOOK, LABEL = "01_measuring", "ex-measuring-bandwidth"


def saxpy_gbps(n, ms): return 12 * n / ms / 1e6
