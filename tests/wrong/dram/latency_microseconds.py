"""The right difference, converted to microseconds instead of nanoseconds."""
CHECKER = "check_step_latency"


def student(ms_short, ms_long, steps):
    return (ms_long - ms_short) / steps * 1e3
