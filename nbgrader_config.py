"""nbgrader's settings for a gpuperf course: copy this file into the nbgrader course folder (the
one with source/, release/, submitted/), or run nbgrader from here.

The chapters run under Numba's CUDA simulator where the grading machine has no GPU: a cell that
launches a student's kernel on a few thousand threads takes seconds to minutes there, far past
nbgrader's default 30 s cell timeout (every reference solution would score 0). The timeouts
below are what `tests/test_nbgrader.py` runs a course chapter with.
"""

c = get_config()  # noqa: F821 - nbgrader defines it when it reads this file

# Seconds one cell may run (the slowest checker cell of the course takes about 2 minutes on two
# CPU cores under the simulator), then it is interrupted and the notebook goes on.
c.Execute.timeout = 600
c.Execute.interrupt_on_timeout = True
c.ExecutePreprocessor.timeout = 600
# The Jupyter kernel may take a while to start on a loaded machine.
c.Execute.startup_timeout = 120
# The student versions keep each answer runnable as the class copies have it: the marked region
# becomes this stub, at the answer's indentation.
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError()"}
