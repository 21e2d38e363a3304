"""Correct: the burst number from the byte address, then divmod twice."""
NOTEBOOK, LABEL = "03_dram", "ex-dram-place"


def place(index, element_bytes, burst_bytes, channels, banks):
    address = index * element_bytes
    row_of_channels, channel = divmod(address // burst_bytes, channels)
    return channel, row_of_channels % banks
