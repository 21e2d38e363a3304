"""Forgets that the banks wrap round: bank grows without bound."""
CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    burst = index * element_bytes // burst_bytes
    return burst % channels, burst // channels
