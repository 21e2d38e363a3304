"""Takes the index for the byte address: every element is one byte."""
from collections import Counter

CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    bursts = {i // burst_bytes for i in indices}
    return max(Counter((b % channels, (b // channels) % banks) for b in bursts).values())
