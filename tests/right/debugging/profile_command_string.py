"""Right, built another way: one string split into words, the flags in another order, the
kernel pattern quoted for the shell."""
import shlex

NOTEBOOK, LABEL = "09_profiling", "ex-profiling-command"


def profile_command(kernel, metrics, program):
    line = (f"ncu --launch-skip 1 --launch-count 1 --clock-control none "
            rf"--metrics {','.join(metrics)} -k 'regex:^{kernel}\['")
    return shlex.split(line) + list(program)
