"""Right numbers, returned in the wrong order."""
CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    burst = index * element_bytes // burst_bytes
    return (burst // channels) % banks, burst % channels
