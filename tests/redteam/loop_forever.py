"""An answer that never returns (busy, not sleeping): the checker's CPU limit stops it (a verdict,
0), well inside the cell timeout the test grades with."""
CELL = ""
ANSWER = """    while True:
        pass"""
EXPECT = ("graded", 0.0)
