"""Fills the banks of channel 0 before moving to channel 1 (not interleaved over channels)."""
CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    burst = index * element_bytes // burst_bytes
    return (burst // banks) % channels, burst % banks
