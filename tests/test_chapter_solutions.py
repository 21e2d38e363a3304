"""Every chapter's own solution passes its own checker, run from solutions/ as the book shows
it (the chapter's setup, the exercise's given code and solution, its checker cell)."""

import json
import re

import pytest
from conftest import ROOT, checker_call, load_answer, solution


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


@pytest.mark.parametrize("hidden_seed", [2, 7919])  # an even and an odd hidden seed
@pytest.mark.parametrize("notebook,label", [e for e in _exercises()
                                            if e[1] not in NEEDS_THE_CHAPTER],
                         ids=lambda v: v)
def test_the_chapters_solution_gets_full_marks_while_grading(notebook, label, hidden_seed,
                                                            monkeypatch, tmp_path, capsys):
    """As ``python -m gpuperf.grade`` runs it: a hidden seed, the sizes drawn from it and
    the cases only grading adds. The course's own solution must pass every one of them."""
    import json as _json

    from gpuperf import exercises

    ns = solution(notebook, label, after=AFTER.get(label, ()))
    log = tmp_path / "verdicts.jsonl"  # set, as the grader sets it, only for the checker cell
    monkeypatch.setattr(exercises, "GRADE_LOG", str(log))
    monkeypatch.setattr(exercises, "GRADING_CELL", f"{notebook}:{label}")
    monkeypatch.setattr(exercises, "_hidden_seed", hidden_seed)
    assert exercises.grading()
    report = eval(checker_call(notebook, label), ns)
    out = capsys.readouterr().out
    assert report, out
    verdicts = [_json.loads(line) for line in log.read_text().splitlines()]
    assert verdicts and all(v["failed"] == 0 and v["points"] == v["possible"]
                            and v["hidden_seed"] == hidden_seed for v in verdicts), verdicts


@pytest.mark.parametrize("notebook,label", [e for e in _exercises()
                                            if e[1] not in NEEDS_THE_CHAPTER],
                         ids=lambda v: v)
def test_the_student_copys_stub_scores_nothing_while_grading(notebook, label, monkeypatch,
                                                             tmp_path, capsys):
    """The exercise as the student copy hands it out (its solution regions stubbed), graded:
    every verdict it logs is worth 0 points, and says the exercise is not implemented."""
    import json as _json

    from gpuperf import exercises

    ns = solution(notebook, label, after=AFTER.get(label, ()), stubbed=True)
    log = tmp_path / "verdicts.jsonl"
    monkeypatch.setattr(exercises, "GRADE_LOG", str(log))
    monkeypatch.setattr(exercises, "GRADING_CELL", f"{notebook}:{label}")
    monkeypatch.setattr(exercises, "_hidden_seed", 2)
    report = eval(checker_call(notebook, label), ns)  # never a traceback: a verdict
    out = capsys.readouterr().out
    assert not report, out
    verdicts = [_json.loads(line) for line in log.read_text().splitlines()]
    assert verdicts and all(v["points"] == 0 for v in verdicts), verdicts


def test_every_exercise_is_covered():
    labels = {label for _, label in _exercises()}
    assert NEEDS_THE_CHAPTER <= labels and set(AFTER) <= labels
    assert len(labels) >= 20


# --------------------------------------------------------------------------- unusual answers

RIGHT = sorted((ROOT / "tests" / "right").glob("*/*.py"))


@pytest.mark.parametrize("path", RIGHT, ids=[f"{p.parent.name}/{p.stem}" for p in RIGHT])
def test_an_unusual_correct_answer_passes_the_checker(path, capsys):
    """tests/right/<chapter>/*.py: correct answers written in ways the chapter's solution is
    not (chained indexing, several statements on a line, other loops and library calls, a
    comment that says return, another algorithm). The checker must accept every one; it is
    called as the chapter's checker cell calls it, with the answer's names in place of the
    solution's."""
    answer = load_answer(path)
    # An exercise that reads the chapter's results: the answer file brings them itself.
    ns = solution(answer.NOTEBOOK, answer.LABEL, after=AFTER.get(answer.LABEL, ()),
                  own_cells=answer.LABEL not in NEEDS_THE_CHAPTER)
    ns.update({k: v for k, v in vars(answer).items() if not k.startswith("__")})
    report = eval(checker_call(answer.NOTEBOOK, answer.LABEL), ns)
    assert report, capsys.readouterr().out


def test_every_exercise_has_an_unusual_correct_answer():
    labels = {label for _, label in _exercises()}
    covered = {load_answer(p).LABEL for p in RIGHT}
    assert labels <= covered, f"no tests/right answer for {sorted(labels - covered)}"
