"""Wrong: only the first metric collected."""

CHECKER = "check_profile_command"


def kernel(kernel, metrics, program):
    return (["ncu", "--clock-control", "none", "-k", f"regex:^{kernel}\\[", "--launch-skip", "1",
             "--launch-count", "1", "--metrics", metrics[0]] + program)
