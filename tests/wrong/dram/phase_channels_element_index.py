"""Divides the element index, not the byte address, by the burst size."""
CHECKER = "check_phase_channels"


def student(width, tile, phase, burst_bytes, channels):
    used = set()
    for row in range(phase * tile, min(phase * tile + tile, width)):
        for col in range(width):
            used.add((row * width + col) // burst_bytes % channels)
    return sorted(used)
