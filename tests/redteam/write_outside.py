"""Writes a file beside the instructor's, into the course package and into the solutions."""
CELL = """import os
for path in [{outside!r}, os.path.join({package!r}, "pwned.py"), os.path.join({source!r}, "x")]:
    try:
        with open(path, "w") as f:
            f.write("pwned")
        print("WROTE", path)
    except OSError as err:
        print("BLOCKED", type(err).__name__)
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
