"""Returns the waves (a fraction) for the rounds."""
import math


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    blocks = math.ceil(M / bm) * math.ceil(N / bn)
    slots = sms * blocks_per_sm
    rounds = math.ceil(blocks / slots)
    return blocks, blocks / slots, blocks - (rounds - 1) * slots
