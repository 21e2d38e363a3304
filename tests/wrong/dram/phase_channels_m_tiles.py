"""Computes M's tiles (row block by, column ph*T + tx) instead of N's."""
CHECKER = "check_phase_channels"


def student(width, tile, phase, burst_bytes, channels):
    used = set()
    for row in range(width):
        for col in range(phase * tile, min(phase * tile + tile, width)):
            used.add((row * width + col) * 4 // burst_bytes % channels)
    return sorted(used)
