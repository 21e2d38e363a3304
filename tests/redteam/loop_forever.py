"""An answer that never returns (busy, not sleeping)."""
CELL = ""
ANSWER = """    while True:
        pass"""
EXPECT = ("no verdict", 0.0)
