"""Counts elements, not bursts: two elements of one burst become two accesses."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    return max(Counter(((i * element_bytes // burst_bytes) % channels,
                        (i * element_bytes // burst_bytes // channels) % banks)
                       for i in indices).values())
