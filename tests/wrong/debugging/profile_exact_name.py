"""Wrong: the kernel's Python name as a plain name; Numba's mangled name never equals it."""

CHECKER = "check_profile_command"


def kernel(kernel, metrics, program):
    return (["ncu", "--clock-control", "none", "-k", kernel, "--launch-skip", "1",
             "--launch-count", "1", "--metrics", ",".join(metrics)] + program)
