"""Wrong: leaves Nsight Compute's default, clocks locked at base, unlike the course's timings."""

CHECKER = "check_profile_command"


def kernel(kernel, metrics, program):
    return (["ncu", "-k", f"regex:^{kernel}\\[", "--launch-skip", "1", "--launch-count", "1",
             "--metrics", ",".join(metrics)] + program)
