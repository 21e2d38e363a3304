"""Chapter "Profiling, sanitizing and debugging": the planted bugs, what the tools said about
them (parsed from captured real output), the Speed-of-Light reading and the two checkers."""

from pathlib import Path

import pytest
from conftest import load_answer

from gpuperf import profiling, records
from gpuperf.kernels import debugging as dbg
from gpuperf.kernels.debugging.checks import _forget_limiter_calls

FIXTURES = Path(__file__).parent / "fixtures" / "profiling"
WRONG = sorted((Path(__file__).parent / "wrong" / "debugging").glob("*.py"))
RIGHT = sorted(p for p in (Path(__file__).parent / "right" / "debugging").glob("*.py")
               if p.stem.startswith("smooth_"))


def test_the_sanitizer_output_is_read_as_it_was_printed():
    racy = profiling.parse_sanitizer((FIXTURES / "sanitizer_racecheck_smooth_racy.txt").read_text())
    assert racy["errors"] == 1 and racy["correct"] is False
    assert racy["first"].startswith("Error: Race reported") and "abi:" not in racy["first"]
    fixed = profiling.parse_sanitizer((FIXTURES / "sanitizer_racecheck_smooth.txt").read_text())
    assert fixed == {"errors": 0, "warnings": 0, "first": None, "correct": True,
                     "max_error": fixed["max_error"]}
    oob = profiling.parse_sanitizer(
        (FIXTURES / "sanitizer_memcheck_copy_unguarded.txt").read_text())
    assert oob["errors"] == 1024 - 1000 and oob["first"].startswith("Invalid __global__ read")
    assert oob["correct"] is None  # the launch failed: the program printed no result
    sync = profiling.parse_sanitizer(
        (FIXTURES / "sanitizer_synccheck_tiled_early_return.txt").read_text())
    assert sync["errors"] == 0 and sync["correct"] is False
    with pytest.raises(ValueError, match="SUMMARY"):
        profiling.parse_sanitizer("========= COMPUTE-SANITIZER\n")


def test_the_recorded_sanitizer_runs_say_what_the_chapter_says():
    rows = {(r["kernel"], r["tool"]): r for r in records.run("profiling_sanitizer").rows}
    assert list(rows) == [(k, t) for k, t, *_ in profiling.SANITIZED]
    assert rows[("smooth_racy", "racecheck")]["errors"] > 0
    assert rows[("smooth", "racecheck")]["errors"] == 0 and rows[("smooth", "racecheck")]["correct"]
    unguarded = rows[("copy_unguarded", "memcheck")]
    assert unguarded["errors"] == -(-unguarded["n"] // 256) * 256 - unguarded["n"]
    for tool in ("synccheck", "racecheck"):  # silent, and wrong: the tools cannot see it
        r = rows[("tiled_early_return", tool)]
        assert r["errors"] == r["warnings"] == 0 and r["correct"] is False


def test_the_speed_of_light_reading():
    sol = records.run("profiling_speed_of_light")
    assert [r["kernel"] for r in sol.rows] == [k for k, *_ in profiling.SPEED_OF_LIGHT_KERNELS]
    # the exercise's answers vary: all five readings on every recorded GPU
    for path in records.available():
        rows = {r["kernel"]: r for r in records.recorded("profiling_speed_of_light", path=path).rows}
        answers = {k: dbg.limiter(r) for k, r in rows.items()}
        assert set(answers.values()) == set(dbg.LIMITERS), (path.stem, answers)
        # the streaming kernels: DRAM sets the memory figure, though the L2's own figure reads
        # as high or a little higher
        for k in ("copy, stride 1", "reduce v8"):
            assert answers[k] == "dram", (path.stem, k, rows[k])
    # what chapter 9 says of the reference GPU's table: a level reads above the memory
    # figure, "as the L2 does in several rows"
    above = {r["kernel"] for r in sol.rows if r["l2_pct"] > r["memory_pct"]}
    assert len(above) >= 2, above
    base = {"sm_pct": 10.0, "memory_pct": 50.0, "dram_pct": 50.0, "l2_pct": 20.0, "l1_pct": 5.0}
    assert dbg.limiter(base) == "latency"
    assert dbg.limiter({**base, "sm_pct": 70.0}) == "compute"
    assert dbg.limiter({**base, "memory_pct": 80.0, "l2_pct": 80.0}) == "l2"
    assert dbg.limiter({**base, "memory_pct": 61.0, "dram_pct": 61.0}) == "dram"
    # the level that sets the memory figure decides, even where the L2 reads a few points higher
    assert dbg.limiter({**base, "memory_pct": 78.0, "dram_pct": 78.0, "l2_pct": 84.0}) == "dram"
    assert dbg.limiter({**base, "memory_pct": 84.0, "dram_pct": 59.0, "l2_pct": 84.0}) == "l2"
    assert dbg.limiter({**base, "memory_pct": 75.0, "l1_pct": 75.0, "sm_pct": 74.0}) == "l1"
    _forget_limiter_calls()


def test_check_limiters_accepts_the_reading_and_names_what_is_wrong(capsys):
    sol = records.run("profiling_speed_of_light")
    right = {r["kernel"]: dbg.limiter(r) for r in sol.rows}
    # an answer made with the course's own reading is refused, whatever it says
    assert not dbg.check_limiters(right)
    assert "course's own answer" in capsys.readouterr().out
    _forget_limiter_calls()
    assert dbg.check_limiters(right)
    assert dbg.check_limiters({k: f" {v.upper()} " for k, v in right.items()})
    for wrong in ({**right, "reduce v1": "l1"},
                  {k: "dram" for k in right},
                  {k: v for k, v in right.items() if k != "reduce v8"},
                  {**right, "the fastest kernel": "dram"},
                  {**right, "reduce v8": "memory"},
                  [("reduce v8", "dram")]):
        assert not dbg.check_limiters(wrong), wrong
    dbg.check_limiters({**right, "reduce v1": "l1"})
    assert "the SM (" in capsys.readouterr().out  # says which percentages decide it
    # the old reading, "the busiest level of memory", calls a streaming kernel L2-bound
    busiest = {r["kernel"]: right[r["kernel"]] if right[r["kernel"]] not in ("dram", "l2", "l1")
               else max(("dram", "l2", "l1"), key=lambda level: r[f"{level}_pct"])
               for r in sol.rows}
    if busiest != right:
        capsys.readouterr()
        assert not dbg.check_limiters(busiest)
        assert "DRAM sets it" in capsys.readouterr().out


def test_find_races_sees_the_missing_barrier():
    found = dbg.find_races(dbg.smooth_racy, 300)
    assert found and "no cuda.syncthreads()" in found[0] and "tile" in found[0]
    assert dbg.find_races(dbg.smooth, 300) == []


def test_the_smoothing_reference():
    import numpy as np

    assert np.allclose(dbg.smooth_reference([3.0]), [3.0])
    assert np.allclose(dbg.smooth_reference([0.0, 3.0, 6.0]), [1.0, 3.0, 5.0])
    with pytest.raises(ValueError, match="x"):
        dbg.smooth_reference([])


@pytest.mark.parametrize("path", WRONG, ids=[p.stem for p in WRONG])
def test_check_smooth_rejects_a_wrong_fix(path, capsys):
    mod = load_answer(path)
    assert mod.CHECKER in ("check_smooth", "check_profile_command")
    assert not getattr(dbg, mod.CHECKER)(mod.kernel), capsys.readouterr().out


@pytest.mark.parametrize("path", RIGHT, ids=[p.stem for p in RIGHT])
def test_check_smooth_accepts_a_right_fix(path, capsys):
    mod = load_answer(path)
    assert dbg.check_smooth(mod.kernel), capsys.readouterr().out


def test_the_figure_has_its_units_and_source():
    sol = records.run("profiling_speed_of_light")
    fig = dbg.plot_speed_of_light(sol)
    ax = fig.axes[0]
    assert "% of peak" in ax.get_xlabel() and "% of peak" in ax.get_ylabel()
    assert any(sol.gpu in t.get_text() for t in fig.texts)


def test_check_limiters_on_the_student_copy_says_not_implemented(capsys):
    sol = records.run("profiling_speed_of_light")
    report = dbg.check_limiters({r["kernel"]: None for r in sol.rows})
    assert not report and "not implemented yet" in capsys.readouterr().out
    assert not dbg.check_limiters({})


def test_check_profile_command_accepts_the_course_command_and_other_spellings():
    """The command gp.profiling builds passes (called from outside the course's own code, as a
    checker would not allow a student), and so does one with --flag=value and another order."""
    from gpuperf import nsight

    def other(kernel, metrics, program):
        return (["ncu", f"--kernel-name=regex:^{kernel}\\[", "--launch-count=1", "--metrics",
                 ",".join(reversed(metrics)), "--clock-control", "none", "--launch-skip", "1"]
                + program)

    assert dbg.check_profile_command(other), "a right answer failed"
    import inspect

    ok = inspect.unwrap(dbg.check_profile_command)(  # past the decorators that refuse it
        lambda k, m, p: nsight.ncu_command(p, kernel=k, metrics=m, launch_skip=1))
    assert ok


def test_the_speed_of_light_labels_do_not_overlap():
    """The recorded points of naive transpose and reduce v8 lie close together: every label
    of the figure stays inside the axes and clear of the others (and of the region names)."""
    import matplotlib.pyplot as plt

    fig = dbg.plot_speed_of_light(records.recorded("profiling_speed_of_light"))
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(boxes) >= len(records.recorded("profiling_speed_of_light").rows)
    inside = ax.get_window_extent(renderer)
    for i, a in enumerate(boxes):
        assert inside.x0 <= a.x0 and a.x1 <= inside.x1, ax.texts[i].get_text()
        for j, b in enumerate(boxes[:i]):
            assert not a.overlaps(b), (ax.texts[i].get_text(), ax.texts[j].get_text())
    plt.close(fig)
