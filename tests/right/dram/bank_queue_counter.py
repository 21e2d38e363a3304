"""Correct: the burst of each element by hand, bursts deduplicated, a Counter of places."""
from collections import Counter

NOTEBOOK, LABEL = "03_dram", "ex-dram-bank-queue"


def bank_queue(indices, element_bytes, burst_bytes, channels, banks):
    bursts = set(i * element_bytes // burst_bytes for i in indices)
    places = Counter((b % channels, (b // channels) % banks) for b in bursts)
    return max(places.values())
