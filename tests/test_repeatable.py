"""A regrade gives the same score: the same racy submission, graded again with the same hidden
seed, gets the same verdict case by case (the simulator runs a block's threads in the same order
on every run, gpuperf.simblock; the emulator's race check reads recorded accesses)."""

import contextlib
import io
from pathlib import Path

import pytest
from conftest import load_answer

from gpuperf import exercises
from gpuperf.kernels import coalescing as co
from gpuperf.kernels import debugging as dbg
from gpuperf.kernels import reduce as red

WRONG = Path(__file__).parent / "wrong"

# Known-wrong answers whose fault is a race or a misplaced barrier, with their checkers.
RACY = {
    "reduce/seq_no_loop_barrier.py": red.check_sequential_max,
    "reduce/seq_no_load_barrier.py": red.check_sequential_max,
    "reduce/warp_no_barrier.py": red.check_block_max,
    "debugging/smooth_no_barrier.py": dbg.check_smooth,
    "debugging/smooth_barrier_after_reads.py": dbg.check_smooth,
    "coalescing/transpose_no_barrier.py": co.check_padded_transpose,
    "coalescing/inplace_no_barrier.py": co.check_inplace_transpose,
}


def _grade(checker, kernel, monkeypatch, tmp_path, k):
    monkeypatch.setattr(exercises, "GRADE_LOG", str(tmp_path / f"log{k}.jsonl"))
    monkeypatch.setattr(exercises, "_hidden_seed", 4242)
    with contextlib.redirect_stdout(io.StringIO()):
        report = checker(kernel)
    return bool(report), report.points, report.possible, report.passed, report.failed


@pytest.mark.parametrize("path", sorted(RACY), ids=lambda p: p)
def test_a_racy_submission_gets_the_same_verdict_on_a_regrade(path, monkeypatch, tmp_path):
    mod = load_answer(WRONG / path)
    kernel = getattr(mod, "kernel", None) or mod.student
    first, second = (_grade(RACY[path], kernel, monkeypatch, tmp_path, k) for k in (1, 2))
    assert first == second
    assert first[0] is False  # and it is refused
