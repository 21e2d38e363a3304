"""Known holes in the checkers: answers a right checker would judge the other way.

Each file in tests/holes/ is a student answer (``student``, ``kernel``, ``make_kernel`` or
``fn``: what the checker takes) with the checker it is for (``CHECKER``, in ``MODULE``, by
default the streams chapter's; ``KWARGS`` for it, if any) and what a right checker does with
it (``EXPECT``: "accept" or "reject").
Found by a reviewer playing a student; kept here so that the holes stay reproducible until
they are closed (issue 14). Each test is a strict expected failure: once a hole is closed the
test passes unexpectedly and fails, and the file moves to tests/wrong/ (a wrong answer) or
into a test of correct answers, its marker removed.
"""

import importlib
from pathlib import Path

import pytest
from conftest import load_answer

from gpuperf.kernels import streams

HOLES = sorted((Path(__file__).parent / "holes").glob("*.py"))


ANSWER_NAMES = ("student", "kernel", "make_kernel", "fn")


def _checker(mod):
    module = importlib.import_module(getattr(mod, "MODULE", streams.__name__))
    return getattr(module, mod.CHECKER)


@pytest.mark.xfail(strict=True, reason="a known hole in the checker (issue 14)")
@pytest.mark.parametrize("path", HOLES, ids=[p.stem for p in HOLES])
def test_the_checker_judges_it_right(path, capsys):
    mod = load_answer(path)
    answer = next(getattr(mod, name) for name in ANSWER_NAMES if hasattr(mod, name))
    report = _checker(mod)(answer, **getattr(mod, "KWARGS", {}))
    assert ("accept" if report else "reject") == mod.EXPECT


def test_every_hole_says_what_a_right_checker_does():
    for path in HOLES:  # none open today: the folder keeps the next ones found
        mod = load_answer(path)
        assert mod.EXPECT in ("accept", "reject") and callable(_checker(mod))
        assert any(hasattr(mod, name) for name in ANSWER_NAMES), path.name
