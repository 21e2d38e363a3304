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


def test_the_shipped_self_checks_name_commits_this_repository_has():
    """Each row names the commit it ran, and the repository has it. A row whose inputs changed
    since is not a failure (``python -m gpuperf.selfcheck --stale`` lists and re-runs those,
    and the devices page says which chapters changed since their GPU check)."""
    import subprocess

    from conftest import ROOT

    try:
        subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git history here to compare the self-check's commits with")
    for path in _shipped():
        doc = json.loads(path.read_text())
        for r in doc["notebooks"]:
            commit = sc.row_commit(doc, r)
            assert commit, (path.name, r["notebook"], "names no commit")
            known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                                   capture_output=True)
            assert known.returncode == 0, (
                f"{path.name}: {r['notebook']} ran on {commit}, which this repository does not "
                "have (a commit that never landed?)")
        for r in sc.stale_rows(doc, root=ROOT):  # computable for every row
            assert r["changed"] and all(isinstance(f, str) for f in r["changed"])


def test_a_row_goes_stale_when_a_file_its_chapter_imports_changes():
    changed = ["notebooks/02_b.ipynb", "solutions/02_b.ipynb"]
    inputs = {"solutions/01_a.ipynb", "src/gpuperf/kernels/dram/kernels.py",
              "src/gpuperf/exercises.py"}
    assert sc.stale_inputs("01_a", changed, inputs=inputs) == []
    assert sc.stale_inputs("02_b", changed, inputs=set()) == changed
    assert sc.stale_inputs("01_a", ["src/gpuperf/kernels/dram/kernels.py"], inputs=inputs) == [
        "src/gpuperf/kernels/dram/kernels.py"]
    # another chapter's kernels are not this row's business
    assert sc.stale_inputs("01_a", ["src/gpuperf/kernels/gdn/kernels.py"], inputs=inputs) == []
    assert sc.stale_inputs("01_a", ["src/gpuperf/exercises.py"], inputs=inputs) == [
        "src/gpuperf/exercises.py"]
    # anything else under the notebook folders (a data file a chapter might read) counts too
    assert sc.stale_inputs("01_a", ["notebooks/data/x.csv"], inputs=inputs) == ["notebooks/data/x.csv"]
    assert sc.row_commit({"commit": "new"}, {"notebook": "01_a"}) == "new"
    assert sc.row_commit({"commit": "new"}, {"notebook": "01_a", "commit": "old"}) == "old"


def test_a_chapters_inputs_are_its_notebooks_and_what_its_code_imports():
    """Read from the import graph: chapter 1 reaches its own chapter package and the shared
    layer, not chapter 8's case study."""
    from conftest import ROOT

    inputs = sc.notebook_inputs("01_measuring", ROOT)
    assert {"solutions/01_measuring.ipynb", "notebooks/01_measuring.ipynb",
            "src/gpuperf/__init__.py", "src/gpuperf/mode.py", "src/gpuperf/records.py"} <= inputs
    assert any(f.startswith("src/gpuperf/kernels/gridstride") for f in inputs)
    assert not any(f.startswith("src/gpuperf/kernels/gdn") for f in inputs)
    assert not any(f.startswith("notebooks/02") for f in inputs)
    with pytest.raises(ValueError, match="no_such_chapter"):
        sc.notebook_inputs("no_such_chapter", ROOT)


def _merge_tool():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "merge_selfchecks", ROOT / "tools" / "device" / "merge_selfchecks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_merging_one_chapter_keeps_the_other_rows_only_while_they_are_still_valid(tmp_path):
    """A self-check of one changed chapter merges into an older full one: the other chapters'
    rows keep their commit. Once a kernel changes, the merge refuses and names them."""
    import subprocess

    tool = _merge_tool()
    repo = tmp_path / "repo"
    for folder in ("notebooks", "solutions", "src/gpuperf/kernels"):
        (repo / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)

    def commit(message):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
        subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
        subprocess.run([*git, "commit", "-qm", message], check=True, capture_output=True)
        return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()

    def write(rel, text):
        (repo / rel).write_text(text)

    for name in ("01_a", "02_b"):
        write(f"notebooks/{name}.ipynb", name)
        write(f"solutions/{name}.ipynb", name)
    write("src/gpuperf/kernels/k.py", "x = 1\n")
    c0 = commit("c0")

    def doc(c, names):
        return {"gpu": "NVIDIA X1", "commit": c, "versions": {}, "budget_s": 60,
                "mode": "gpu", "measure": True, "simulated": False, "passed": True,
                "notebooks": [{"notebook": n, "copy": copy, "ok": True, "seconds": 1.0}
                              for n in names for copy in ("chapter", "student")]}

    out = tmp_path / "selfcheck.json"
    out.write_text(json.dumps(doc(c0, ["01_a", "02_b"])))
    write("solutions/02_b.ipynb", "02_b, changed")
    c1 = commit("c1")
    part = tmp_path / "part.json"
    part.write_text(json.dumps(doc(c1, ["02_b"])))
    merged = tool.merge(out, [part], root=repo)
    commits = {(r["notebook"], r["copy"]): r["commit"] for r in merged["notebooks"]}
    assert commits == {("01_a", "chapter"): c0, ("01_a", "student"): c0,
                       ("02_b", "chapter"): c1, ("02_b", "student"): c1}
    assert merged["commit"] == c1 and merged["passed"]
    assert sc._commits_label(merged) == f"{c1} (2 of 4 rows at {c0})"
    # a part of chapter 01 only, while 02's own change since c0 is not in it: refused
    part.write_text(json.dumps(doc(c1, ["01_a"])))
    with pytest.raises(SystemExit, match="02_b"):
        tool.merge(out, [part], root=repo)
    # a kernel changed: chapter 01's old rows are stale, so a part of 02 alone is refused
    write("src/gpuperf/kernels/k.py", "x = 2\n")
    c2 = commit("c2")
    part.write_text(json.dumps(doc(c2, ["02_b"])))
    with pytest.raises(SystemExit, match="01_a"):
        tool.merge(out, [part], root=repo)
    part.write_text(json.dumps(doc(c2, ["01_a", "02_b"])))
    assert {r["commit"] for r in tool.merge(out, [part], root=repo)["notebooks"]} == {c2}
    # parts of two commits, or of another GPU, never merge
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**doc(c2, ["01_a"]), "gpu": "NVIDIA X2"}))
    with pytest.raises(SystemExit, match="gpu"):
        tool.merge(out, [other], root=repo)


def test_the_device_tree_listing_watches_the_same_paths_as_the_freshness_rule():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("tree_hash",
                                                  ROOT / "tools" / "device" / "tree_hash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.WATCHED == sc.WATCHED


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
    # abc1234 is not a commit of this repository: both chapters count as changed since
    assert colab["chapters changed since"].startswith("2 of 2: not run on a GPU")
    assert colab["measurements"].startswith("live")
    assert rows[0]["measurements"].startswith("recorded")  # said, not passed off as live
    assert colab["CUDA toolkit"] == "12.8.93 (pip wheels)" and rows[0]["CUDA toolkit"] == "the machine's own"


def test_sliced_polls_find_a_message_that_arrives_after_the_first_slice(monkeypatch):
    """A wait is split into short polls: a reply that one long poll would miss is found by
    the next slice, and a wait with nothing to find still ends at its timeout."""
    import asyncio
    import time
    from queue import Empty

    from gpuperf import nbtools

    monkeypatch.setattr(nbtools, "POLL_SLICE_S", 0.05)
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
    nbtools._sliced(ch)
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
        {"gpu": "NVIDIA X1", "jobs": 4, "notebooks": [run("01_a", "chapter", 12.0)]}))
    rows = selfcheck.gpu_seconds(tmp_path)
    assert [r["notebook"] for r in rows] == ["01_a", "02_b", "all notebooks"]
    # a run of several notebooks at once says so: each took longer than it would alone
    assert rows[0] == {"notebook": "01_a", "chapter copy, course versions, X1": 10.0,
                       "student copy, course versions, X1": 8.0,
                       "chapter copy, Colab-like, 4 at once, X1": 12.0,
                       "student copy, Colab-like, 4 at once, X1": None}
    assert rows[1]["student copy, course versions, X1"] is None  # not run: not invented
    assert rows[-1]["chapter copy, course versions, X1"] == 30.5
    assert rows[-1]["student copy, Colab-like, 4 at once, X1"] == 0
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


def test_stale_runs_exactly_the_chapters_whose_imports_changed(tmp_path, monkeypatch):
    """In a repository of two chapters, a change to chapter b's package makes only b's row
    stale; ``--stale`` lists it, runs it (two at a time with --jobs, as nothing is measured
    here) and keeps a's row with its older commit."""
    import subprocess

    pytest.importorskip("nbclient")
    monkeypatch.delenv("GPUPERF_COMMIT", raising=False)

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True).stdout.strip()

    for rel, text in {"src/gpuperf/__init__.py": "", "src/gpuperf/kernels/__init__.py": "",
                      "src/gpuperf/kernels/a/__init__.py": "A = 1\n",
                      "src/gpuperf/kernels/b/__init__.py": "B = 1\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    folder = tmp_path / "solutions"
    folder.mkdir()
    for name, chapter in (("01_a", "a"), ("02_b", "b")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(f"print('{name}')  # reads gp.{chapter}")]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, folder / f"{name}.ipynb")
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "one", "--allow-empty")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "two")
    first = git("rev-parse", "HEAD")
    out = tmp_path / "selfcheck.json"
    common = ["--notebooks", str(folder), "--out", str(out), "--copies", "chapter"]
    assert sc.main([*common, "--jobs", "2"]) == 0
    assert sc.stale_rows(json.loads(out.read_text()), root=tmp_path) == []
    (tmp_path / "src/gpuperf/kernels/b/__init__.py").write_text("B = 2\n")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "three")
    second = git("rev-parse", "HEAD")
    stale = sc.stale_rows(json.loads(out.read_text()), root=tmp_path)
    assert [(r["notebook"], r["changed"]) for r in stale] == [
        ("02_b", ["src/gpuperf/kernels/b/__init__.py"])]
    assert sc.main([*common, "--stale"]) == 0
    doc = json.loads(out.read_text())
    assert {r["notebook"]: sc.row_commit(doc, r) for r in doc["notebooks"]} == {
        "01_a": first, "02_b": second}
    assert sc.stale_rows(doc, root=tmp_path) == []
    assert sc.main([*common, "--stale"]) == 0  # nothing stale: nothing run
