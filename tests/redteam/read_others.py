"""Lists the other students' folders, reads a classmate's notebook, finds the grader's working
folder through /proc/<ppid>/cwd."""
CELL = """import os
for path in [{subs!r}, os.path.join({subs!r}, "right", "01_demo.ipynb"), {source!r}]:
    try:
        seen = os.listdir(path) if os.path.isdir(path) else open(path).read()[:40]
        print("SEEN" if seen else "EMPTY", path)
    except OSError as err:
        print("HIDDEN", type(err).__name__)
try:
    print("PARENT CWD", os.readlink(f"/proc/{{os.getppid()}}/cwd"))
except OSError as err:
    print("PARENT CWD HIDDEN", type(err).__name__)
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
