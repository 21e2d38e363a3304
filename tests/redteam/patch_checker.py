"""A wrong answer, and an earlier cell that replaces the checker with one that passes."""
CELL = """import gpuperf as gp
def passes(fn):
    r = gp.exercises.Report("check_bandwidth_formula")
    r.passed += ["a", "b", "c"]
    gp.exercises._log_verdict(r)
    return r
gp.gridstride.check_bandwidth_formula = passes
"""
ANSWER = "WRONG"
EXPECT = ("review", 0.0)
