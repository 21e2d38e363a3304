"""The GPU self-check's judgement of executed notebooks, and one small run end to end."""

from __future__ import annotations

import json

import nbformat
import pytest

from gpuperf import selfcheck as sc


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    for outputs, tags in cells:
        c = nbformat.v4.new_code_cell("pass", metadata={"tags": tags})
        c.outputs = [nbformat.from_dict(o) for o in outputs]
        nb.cells.append(c)
    return nb


def _stream(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def _error(ename):
    return {"output_type": "error", "ename": ename, "evalue": "x", "traceback": []}


def test_chapter_copy_problems_are_found():
    nb = _nb(([_stream("\u2713 sum: all 9 checks passed.\n")], []),
             ([_stream("\u2717 fast sum: 1 of 9 checks failed.\n  \u2717 n=33: wrong\n")], []),
             ([_stream("NumbaPerformanceWarning: Grid size 1\n", "stderr")], []),
             ([_stream("a warning shown on purpose\n", "stderr")], ["allow-stderr"]),
             ([_error("ValueError")], []))
    run = sc._analyse(nb, sc._Run("x", "chapter"), student=False)
    assert run.checkers_passed == 1 and run.checkers_failed == 1
    assert len(run.problems) == 4, run.problems  # the header and its failed case
    assert any("own solution" in p for p in run.problems)
    assert any("stderr" in p for p in run.problems)
    assert any("ValueError" in p for p in run.problems)


def test_student_copy_stubs_are_expected_but_tracebacks_are_not():
    ok = _nb(([_stream("\u2717 sum: 1 of 1 checks failed.\n  \u2717 check: not implemented yet: "
                       "replace it\n")], []),
             ([_error("NotImplementedError")], []))
    run = sc._analyse(ok, sc._Run("x", "student"), student=True)
    assert run.ok and run.stubs == 2
    bad = _nb(([_stream("\u2717 sum: 1 of 1 checks failed.\n  \u2717 check: your code raised "
                        "AttributeError\n")], []),
              ([_error("AttributeError")], []))
    run = sc._analyse(bad, sc._Run("x", "student"), student=True)
    assert len(run.problems) == 2, run.problems


def test_a_small_notebook_end_to_end(tmp_path):
    pytest.importorskip("nbclient")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# T"),
                nbformat.v4.new_code_cell("print('\u2713 demo: all 1 checks passed.')"),
                nbformat.v4.new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n"
                                          "    ### END SOLUTION"),
                nbformat.v4.new_code_cell("import sys; print('oops', file=sys.stderr)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, folder / "01_demo.ipynb")
    out = tmp_path / "selfcheck.json"
    assert sc.main(["--notebooks", str(folder), "--out", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert [r["copy"] for r in doc["notebooks"]] == ["chapter", "student"]
    for r in doc["notebooks"]:
        assert not r["ok"] and any("stderr" in p for p in r["problems"])
        assert r["checkers_passed"] == 1 and r["cells"] == 3


def test_append_merges_runs_of_one_commit_and_refuses_others(tmp_path):
    pytest.importorskip("nbclient")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("01_a", "02_b"):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(f"print('{name}')")]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, folder / f"{name}.ipynb")
    out = tmp_path / "selfcheck.json"
    common = ["--notebooks", str(folder), "--out", str(out), "--copies", "chapter"]
    assert sc.main([*common, "--only", "01"]) == 0
    assert sc.main([*common, "--only", "02", "--append"]) == 0
    doc = json.loads(out.read_text())
    assert [r["notebook"] for r in doc["notebooks"]] == ["01_a", "02_b"] and doc["passed"]
    # Without --append the file is replaced; with a different budget it is refused.
    assert sc.main([*common, "--only", "02", "--append", "--budget", "30"]) == 2
    assert len(json.loads(out.read_text())["notebooks"]) == 2
    assert sc.main([*common, "--only", "02"]) == 0
    assert [r["notebook"] for r in json.loads(out.read_text())["notebooks"]] == ["02_b"]


def test_a_cell_that_shows_a_rejection_on_purpose():
    shown = _nb(([_stream("\u2717 remap: 2 of 11 checks failed.\n  \u2717 traced: 32 sectors\n")],
                 ["expect-reject"]))
    assert sc._analyse(shown, sc._Run("x", "chapter"), student=False).ok
    wrong = _nb(([_stream("\u2713 remap: all 11 checks passed.\n")], ["expect-reject"]))
    assert not sc._analyse(wrong, sc._Run("x", "chapter"), student=False).ok


def _shipped():
    from gpuperf import records

    return sorted(records.DATA_DIR.glob("selfcheck-*.json"))


def test_the_shipped_self_checks_pass_for_every_notebook_and_copy():
    from conftest import ROOT

    shipped = _shipped()
    assert shipped, "no GPU self-check is shipped (python -m gpuperf.selfcheck on a GPU)"
    names = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
    for path in shipped:
        doc = json.loads(path.read_text())
        assert doc["passed"] and not doc["simulated"], path.name
        rows = {(r["notebook"], r["copy"]): r for r in doc["notebooks"]}
        assert set(rows) == {(n, c) for n in names for c in ("chapter", "student")}, path.name
        for (name, copy), r in rows.items():
            assert r["ok"] and r["seconds"] <= doc["budget_s"] <= 60, (path.name, name, copy)


def test_the_shipped_self_checks_are_newer_than_the_notebooks_and_kernels():
    """The self-check must have run on the commit that last changed what it checks."""
    import subprocess

    from conftest import ROOT

    for path in _shipped():
        commit = json.loads(path.read_text())["commit"]
        try:
            changed = subprocess.run(
                ["git", "log", "--format=%h", f"{commit}..HEAD", "--", "notebooks", "solutions",
                 "src/gpuperf/kernels", "src/gpuperf/exercises.py"],
                cwd=ROOT, capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            pytest.skip("no git history here to compare the self-check's commit with")
        assert not changed.stdout.strip(), (
            f"{path.name} ran on {commit}; the chapters, their checkers or kernels changed since "
            f"({changed.stdout.split()}): run python -m gpuperf.selfcheck on a GPU again")


def test_the_simulator_banner_on_stderr_is_not_a_problem():
    from gpuperf._mode import SIMULATOR_BANNER

    banner = SIMULATOR_BANNER + "\n"
    run = sc._analyse(_nb(([_stream(banner, "stderr")], [])), sc._Run("x", "chapter"),
                      student=False)
    assert run.ok, run.problems
    run = sc._analyse(_nb(([_stream(banner + "SomeWarning: x\n", "stderr")], [])),
                      sc._Run("x", "chapter"), student=False)
    assert not run.ok and "SomeWarning" in run.problems[0]


def test_shipped_summarises_each_result_file(tmp_path):
    doc = {"gpu": "Some GPU", "date": "2026-01-02T03:04:05+00:00", "commit": "abc1234",
           "budget_s": 60.0, "versions": {"driver": "999.1", "numpy": "2.1.3",
                                          "nvidia-cuda-nvcc-cu12": "12.8.93"},
           "notebooks": [{"notebook": "01_a", "copy": "chapter", "seconds": 12.0, "ok": True},
                         {"notebook": "02_b", "copy": "chapter", "seconds": 41.5, "ok": False},
                         {"notebook": "01_a", "copy": "student", "seconds": 9.0, "ok": True}]}
    (tmp_path / "selfcheck-some-gpu-colab.json").write_text(json.dumps(doc))
    (tmp_path / "selfcheck-some-gpu.json").write_text(json.dumps({**doc, "versions": {},
                                                                  "measure": False}))
    (tmp_path / "other.json").write_text("{}")
    rows = sc.shipped(tmp_path)
    assert [r["file"] for r in rows] == ["selfcheck-some-gpu.json", "selfcheck-some-gpu-colab.json"]
    colab = rows[1]
    assert colab["environment"].startswith("Colab-like") and colab["date"] == "2026-01-02"
    assert colab["chapter notebooks passed"] == "1 of 2" and colab["student copies passed"] == "1 of 1"
    assert colab["slowest notebook"] == "02_b (chapter): 42 s of 60 s allowed"
    assert colab["measurements"].startswith("live")
    assert rows[0]["measurements"].startswith("recorded")  # said, not passed off as live
    assert colab["CUDA toolkit"] == "12.8.93 (pip wheels)" and rows[0]["CUDA toolkit"] == "the machine's own"


def test_sliced_polls_find_a_message_that_arrives_after_the_first_slice(monkeypatch):
    """A wait is split into short polls: a reply that one long poll would miss is found by
    the next slice, and a wait with nothing to find still ends at its timeout."""
    import asyncio
    import time
    from queue import Empty

    from gpuperf import selfcheck

    monkeypatch.setattr(selfcheck, "POLL_SLICE_S", 0.05)
    arrives = time.monotonic() + 0.12
    asked = []

    class Channel:
        async def get_msg(self, timeout=None):
            asked.append(timeout)
            await asyncio.sleep(timeout)  # a poll that misses any wake-up: sleeps it out
            if time.monotonic() >= arrives:
                return {"msg": "reply"}
            raise Empty

    ch = Channel()
    selfcheck._sliced(ch)
    assert asyncio.run(ch.get_msg(timeout=10)) == {"msg": "reply"}
    assert max(asked) <= 0.05 and 2 <= len(asked) <= 10
    arrives = time.monotonic() + 100
    t0 = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(ch.get_msg(timeout=0.2))
    assert 0.2 <= time.monotonic() - t0 < 1.0


def test_gpu_seconds_add_up_per_environment_and_copy(tmp_path):
    from gpuperf import selfcheck

    def run(nb, copy, seconds):
        return {"notebook": nb, "copy": copy, "ok": True, "seconds": seconds}

    (tmp_path / "selfcheck-gpu.json").write_text(json.dumps(
        {"gpu": "NVIDIA X1", "notebooks": [run("01_a", "chapter", 10.0), run("01_a", "student", 8.0),
                                           run("02_b", "chapter", 20.5)]}))
    (tmp_path / "selfcheck-gpu-colab.json").write_text(json.dumps(
        {"gpu": "NVIDIA X1", "notebooks": [run("01_a", "chapter", 12.0)]}))
    rows = selfcheck.gpu_seconds(tmp_path)
    assert [r["notebook"] for r in rows] == ["01_a", "02_b", "all notebooks"]
    assert rows[0] == {"notebook": "01_a", "chapter copy, course versions, X1": 10.0,
                       "student copy, course versions, X1": 8.0,
                       "chapter copy, Colab-like, X1": 12.0, "student copy, Colab-like, X1": None}
    assert rows[1]["student copy, course versions, X1"] is None  # not run: not invented
    assert rows[-1]["chapter copy, course versions, X1"] == 30.5
    assert rows[-1]["student copy, Colab-like, X1"] == 0
    with pytest.raises(ValueError, match="does not exist"):
        selfcheck.gpu_seconds(tmp_path / "missing")


def test_gpu_seconds_leave_out_a_replay_of_other_notebooks(tmp_path):
    """A MEASURE = False run of another commit ran other notebooks (renamed, added): its
    column would put old names beside new ones."""
    from gpuperf import selfcheck

    def doc(commit, measure=True):
        return json.dumps({"gpu": "NVIDIA X1", "commit": commit, "measure": measure, "notebooks": [
            {"notebook": "01_a", "copy": "student", "ok": True, "seconds": 5.0}]})

    (tmp_path / "selfcheck-gpu.json").write_text(doc("new"))
    (tmp_path / "replay-gpu.json").write_text(doc("old", measure=False))
    assert not any("MEASURE" in k for k in selfcheck.gpu_seconds(tmp_path)[0])
    (tmp_path / "replay-gpu.json").write_text(doc("new", measure=False))
    assert any("MEASURE" in k for k in selfcheck.gpu_seconds(tmp_path)[0])


def test_a_t4_estimate_brackets_the_measuring_time(tmp_path):
    """With a MEASURE = False run beside a measuring one: at least the measuring run's time,
    at most the replay plus the measuring part slowed by the bandwidth ratio."""
    from gpuperf import selfcheck

    def run(nb, seconds):
        return {"notebook": nb, "copy": "student", "ok": True, "seconds": seconds}

    gpu = "NVIDIA H100 80GB HBM3"  # a GPU with a shipped record: its peak bandwidth is known
    (tmp_path / "selfcheck-h100.json").write_text(json.dumps(
        {"gpu": gpu, "commit": "abc", "notebooks": [run("01_a", 50.0), run("02_b", 20.0)]}))
    assert selfcheck.t4_estimate(tmp_path) == []  # no replay run: no estimate
    replay = {"gpu": gpu, "commit": "old", "measure": False,
              "notebooks": [run("01_a", 20.0), run("02_b", 21.0)]}
    (tmp_path / "replay-h100.json").write_text(json.dumps(replay))
    assert selfcheck.t4_estimate(tmp_path) == []  # other notebooks: no estimate
    (tmp_path / "replay-h100.json").write_text(json.dumps({**replay, "commit": "abc"}))
    rows = selfcheck.t4_estimate(tmp_path)
    ratio = 3352.32 / selfcheck.T4_DATASHEET_GBPS
    assert rows[0] == {"notebook": "01_a", "MEASURE = False": 20.0, "measuring": 30.0,
                       "T4 at least": 50.0, "T4 at most": round(20.0 + 30.0 * ratio, 1)}
    assert rows[1]["measuring"] == 0.0 and rows[1]["T4 at most"] == 21.0  # never negative
    assert rows[-1]["notebook"] == "all notebooks" and rows[-1]["T4 at least"] == 70.0
    columns = selfcheck.gpu_seconds(tmp_path)[0]
    assert columns["student copy, course versions, MEASURE = False, H100 80GB HBM3"] == 20.0
    assert "chapter copy, course versions, MEASURE = False, H100 80GB HBM3" not in columns
