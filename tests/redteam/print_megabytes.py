"""Prints 40 MB before a right answer."""
CELL = """for _ in range(400):
    print("x" * 100_000)
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
