"""Looks only at the first round of the channels: the loads past it are dropped."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    round_bytes = burst_bytes * channels
    bursts = {i * element_bytes // burst_bytes for i in indices if i * element_bytes < round_bytes}
    return max(Counter((b % channels, (b // channels) % banks) for b in bursts).values(), default=0)
