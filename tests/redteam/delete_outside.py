"""Deletes the instructor's file and the course's solutions by absolute path."""
CELL = """import os, shutil
for what, act in [("victim", lambda: os.remove({victim!r})),
                  ("solutions", lambda: shutil.rmtree({source!r}))]:
    try:
        act()
        print("DELETED", what)
    except OSError as err:
        print("BLOCKED", what, type(err).__name__)
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
