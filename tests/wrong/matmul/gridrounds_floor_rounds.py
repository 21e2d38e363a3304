"""Rounds down: a partly full last round is left out (the waves, truncated)."""


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    blocks = -(-M // bm) * -(-N // bn)
    slots = sms * blocks_per_sm
    rounds = blocks // slots
    return blocks, rounds, blocks - max(rounds - 1, 0) * slots
