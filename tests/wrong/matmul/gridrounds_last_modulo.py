"""The last round as blocks % slots: zero when the blocks fill the rounds exactly."""
import math


def grid_rounds(M, N, bm, bn, sms, blocks_per_sm):
    blocks = math.ceil(M / bm) * math.ceil(N / bn)
    slots = sms * blocks_per_sm
    return blocks, math.ceil(blocks / slots), blocks % slots
