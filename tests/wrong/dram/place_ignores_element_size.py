"""Treats the element index as a byte address: right only for 1-byte elements."""
CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    burst = index // burst_bytes
    return burst % channels, (burst // channels) % banks
