"""One module per chapter: kernels, host wrappers, experiments and checkers.

Each is reachable from the top-level package as ``gp.<module>`` (``gp.reduce``...).
"""
