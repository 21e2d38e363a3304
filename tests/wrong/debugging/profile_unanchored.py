"""Wrong: a pattern that also picks other kernels whose names contain this one."""

CHECKER = "check_profile_command"


def kernel(kernel, metrics, program):
    return (["ncu", "--clock-control", "none", "-k", f"regex:{kernel}", "--launch-skip", "1",
             "--launch-count", "1", "--metrics", ",".join(metrics)] + program)
