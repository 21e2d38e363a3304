"""Correct: the blocks counted tile by tile and the rounds by taking the SMs' slots away until
nothing is left (a loop instead of a division), the answer a list."""

NOTEBOOK, LABEL = "05_unrolling", "ex-unrolling-rounds"


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    rows = len(range(0, M, bm))
    cols = len(range(0, N, bn))
    left, rounds, last = rows * cols, 0, 0
    while left > 0:
        last = min(left, sms * blocks_per_sm)
        left -= last
        rounds += 1
    return [rows * cols, rounds, last]
