"""How many banks are busy, not the longest queue."""
CHECKER = "check_bank_queue"


def student(indices, element_bytes, burst_bytes, channels, banks):
    bursts = {i * element_bytes // burst_bytes for i in indices}
    return len({(b % channels, (b // channels) % banks) for b in bursts})
