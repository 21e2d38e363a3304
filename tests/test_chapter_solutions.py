"""Every chapter's own solution passes its own checker, run from solutions/ as the book shows
it (the chapter's setup, the exercise's given code and solution, its checker cell)."""

import json
import re

import pytest
from conftest import ROOT, checker_call, solution


def _exercises():
    out = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            m = re.search(r":label: (ex-[\w-]+)", "".join(cell["source"]))
            if m:
                out.append((path.stem, m.group(1)))
    return out


# Exercises whose checker reads what earlier cells of the chapter measured (a sweep, a
# recorded result): the self-check and the book build run them with the whole chapter.
NEEDS_THE_CHAPTER = {"ex-coarsening-best-factor"}
# Exercises whose cells use names an earlier exercise of the same chapter imported.
AFTER = {"ex-gdn-beta": ("ex-gdn-registers",)}


@pytest.mark.parametrize("notebook,label", [e for e in _exercises()
                                            if e[1] not in NEEDS_THE_CHAPTER],
                         ids=lambda v: v)
def test_the_chapters_solution_passes_its_checker(notebook, label, capsys):
    ns = solution(notebook, label, after=AFTER.get(label, ()))
    report = eval(checker_call(notebook, label), ns)
    out = capsys.readouterr().out
    assert report, out
    assert "was not compiled" not in out, out  # the compile check ran, it was not skipped


def test_every_exercise_is_covered():
    labels = {label for _, label in _exercises()}
    assert NEEDS_THE_CHAPTER <= labels and set(AFTER) <= labels
    assert len(labels) >= 20
