"""Wrong: profiles the first launch, which may include loading the module."""

CHECKER = "check_profile_command"


def kernel(kernel, metrics, program):
    return (["ncu", "--clock-control", "none", "-k", f"regex:^{kernel}\\[", "--launch-count", "1",
             "--metrics", ",".join(metrics)] + program)
