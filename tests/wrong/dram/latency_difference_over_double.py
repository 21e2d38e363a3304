"""Takes the difference but divides it by 2 x steps, the longer chain's steps."""
CHECKER = "check_step_latency"


def student(ms_short, ms_long, steps):
    return (ms_long - ms_short) / (2 * steps) * 1e6
