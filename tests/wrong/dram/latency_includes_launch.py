"""Divides the longer chain's time by its steps: the launch stays in the latency."""
CHECKER = "check_step_latency"


def student(ms_short, ms_long, steps):
    return ms_long / (2 * steps) * 1e6
