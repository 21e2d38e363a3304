"""Queues per bank number: bank 0 of channel 0 and bank 0 of channel 1 counted as one."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    bursts = {i * element_bytes // burst_bytes for i in indices}
    return max(Counter((b // channels) % banks for b in bursts).values())
