"""A wrong answer that, from inside the student's own function, wraps the verdict logger so that
every failed check is logged as passed (three lines did it before the grader was changed)."""
CELL = ""
ANSWER = """    import gpuperf.exercises as e
    if not getattr(e, "_forged", False):
        real = e._log_verdict
        def forged(report):
            report.passed += [name for name, _ in report.failed]
            report.failed.clear()
            real(report)
        e._log_verdict, e._forged = forged, True
    return 2 * 4 * n / (ms * 1e-3) / 1e9"""
EXPECT = ("review", 0.0)
