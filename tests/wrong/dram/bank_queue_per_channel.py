"""Queues per channel: the banks of a channel are not told apart."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    bursts = {i * element_bytes // burst_bytes for i in indices}
    return max(Counter(b % channels for b in bursts).values())
