"""Forgets that the banks wrap: every round of the channels is a new bank."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    bursts = {i * element_bytes // burst_bytes for i in indices}
    return max(Counter((b % channels, b // channels) for b in bursts).values())
