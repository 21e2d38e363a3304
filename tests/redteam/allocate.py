"""Allocates (and touches) memory without bound."""
CELL = """chunks = []
try:
    while len(chunks) < 256:  # 64 GiB at most
        chunks.append(bytearray(256 << 20))
except MemoryError:
    pass
print("GOT GiB", len(chunks) / 4)
del chunks
"""
ANSWER = "RIGHT"
EXPECT = ("graded", 1.0)
