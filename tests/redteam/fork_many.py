"""Starts processes until it cannot (bounded here at 2,000, then stops them)."""
CELL = """import subprocess
procs = []
try:
    for _ in range(2000):
        procs.append(subprocess.Popen(["sleep", "4242"]))
except (OSError, BlockingIOError) as err:
    print("STOPPED", type(err).__name__)
print("STARTED", len(procs))
for p in procs:
    p.kill()
    p.wait()
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
