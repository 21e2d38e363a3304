"""Deals elements, not bursts, round the channels."""
CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    return index % channels, (index // channels) % banks
