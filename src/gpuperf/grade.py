"""``python -m gpuperf.grade submissions/ --out gradebook.csv``: grade a class's notebooks.

``submissions/`` holds one folder per student, each with the student's copies of the chapter
notebooks (``submissions/ada/03_dram.ipynb``), as collected from Colab or a course site.
Each notebook is run top to bottom in a fresh Jupyter kernel (on the GPU when there is one,
under the simulator otherwise), with every checker cell put back as the course's source
notebook has it: a student who edits or deletes a checker cell cannot change the verdict.
A cell that runs longer than ``--cell-timeout`` is interrupted and the run goes on, so one
student's endless loop costs one timeout, not the class; a kernel that dies ends that
notebook only.

``--out gradebook.csv`` is the gradebook: one row per student, one column per exercise
(``notebook/checker``) with its score, the fraction of the checks' points earned (partial
credit), and the total. Beside it, ``gradebook-feedback/<student>.md`` holds each student's
checker reports, to hand back, and ``gradebook-details.csv`` one row per student, notebook and
checker: the checks passed and run, the points, the score, where it was graded (the GPU, or
the simulator) and a status: ``graded``, ``not
implemented`` (the stub is untouched), ``no verdict`` (the checker never reported: the
detail says why, e.g. a timeout or an error in the student's code before it), ``missing``
(a notebook others handed in and this student did not) or ``not graded`` (a file that is no
course notebook). Colab's ``Copy of 03_dram.ipynb`` and a browser's ``03_dram (1).ipynb``
count as ``03_dram.ipynb``; of two files for one notebook the newest is graded, and the row
says so. Each file is written
whole or not at all, and existing ones are replaced only with ``--force``.

While grading, every checker adds cases the student never saw: a data seed drawn afresh for
each checker run, and sizes drawn from it (``exercises.seeds``, ``hidden_sizes``); they
show in the feedback as "hidden case".

Before each checker, the modules it calls are reloaded (a checker replaced in an earlier cell
is restored), and the verdicts go to a file named afresh for each notebook, set only while
the course's checker cell runs. The student's code runs in a scratch folder. This is not a
sandbox: the code runs with the grader's permissions, and a student who writes code to forge
results inside the kernel is not ruled out; grade untrusted work in a container.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import validate as v
from .nbtools import EXPECT_REJECT, checker_cells, default_file_mode, notebook_arg  # noqa: F401
from .nbtools import checker_name as _checker_name

# The details file: one row per student, notebook and exercise.
COLUMNS = ("student", "notebook", "exercise", "passed", "total", "points", "possible", "score",
           "status", "graded_on", "detail")


def _guarded(cid: str, source: str, log: str, hidden_seed: int | None = None) -> str:
    """A checker cell's code, run with fresh copies of the modules it calls (an earlier cell
    cannot have replaced the checker) and with its verdicts logged for the grader; with
    ``hidden_seed``, the hidden cases are drawn from it (the same for every student)."""
    import textwrap

    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr.startswith("check_") and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
    reloads = "".join(
        f"    if getattr({n}, '__name__', '').startswith('gpuperf.'):\n"
        f"        _il.reload({n})\n" for n in sorted(names))
    return ("import importlib as _il\nimport gpuperf.exercises as _gx\n"
            "_il.reload(_gx)\n"
            + (f"_gx._hidden_seed = {int(hidden_seed)}\n" if hidden_seed is not None else "")
            + "try:\n" + reloads + f"    _gx.GRADE_LOG, _gx.GRADING_CELL = {log!r}, {cid!r}\n"
            + textwrap.indent(source.rstrip() or "pass", "    ") + "\n"
            "finally:\n    _gx.GRADE_LOG = _gx.GRADING_CELL = None\n")


def grading_notebook(submission, source, log: str = "verdicts.jsonl",
                     hidden_seed: int | None = None):
    """The student's notebook with every checker cell as ``source`` has it (restored where
    the student deleted it), each guarded and tagged so that its verdicts reach ``log``, its
    hidden cases drawn from ``hidden_seed`` (a fresh one per cell if None)."""
    import copy

    import nbformat

    notebook_arg(submission)
    notebook_arg(source)
    v.string(log, "log")
    if hidden_seed is not None:
        v.integer(hidden_seed, "hidden_seed", minimum=2)
    nb = copy.deepcopy(submission)
    checks = dict(checker_cells(source))
    order = [c.get("id") for c in source.cells]

    def tagged(cid):
        return nbformat.v4.new_code_cell(_guarded(cid, checks[cid], log, hidden_seed))

    cells = []
    for cell in nb.cells:
        if cell.get("id") in checks:
            continue  # the student's version of a checker cell: replaced below
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    # Put each checker back after the nearest cell before it in the source that survives.
    for cid in checks:
        here = order.index(cid)
        anchor = next((order[j] for j in range(here - 1, -1, -1)
                       if any(c.get("id") == order[j] for c in cells)), None)
        at = 0 if anchor is None else next(
            i for i, c in enumerate(cells) if c.get("id") == anchor) + 1
        new = tagged(cid)
        new.id = cid
        cells.insert(at, new)
    nb.cells = cells
    return nb


# Seconds a cell may go on after it was interrupted for its timeout (a GPU kernel that never
# ends cannot be interrupted) before the notebook is stopped there.
INTERRUPT_GRACE_S = 10.0


def _grading_client():
    """nbclient's client (polled in slices, as the self-check's) that interrupts a cell past
    its timeout, and stops the notebook if the cell does not stop within the grace."""
    import asyncio

    from nbclient.exceptions import CellTimeoutError

    from .nbtools import client_class

    class GradingClient(client_class()):
        async def _async_handle_timeout(self, timeout, cell=None):
            first = getattr(self, "_interrupted", None)
            if first is None or first[0] is not cell:
                self._interrupted = (cell, time.monotonic())
                return await super()._async_handle_timeout(timeout, cell)
            if time.monotonic() - first[1] < INTERRUPT_GRACE_S:
                await asyncio.sleep(0.5)  # wait for the interrupted cell's reply
                return None
            raise CellTimeoutError.error_from_timeout_and_cell(
                "the cell did not stop when interrupted", timeout, cell)

    return GradingClient


def _run(nb, *, cell_timeout: int, cwd: Path) -> str | None:
    """Execute ``nb`` in a fresh kernel; None, or why the run stopped early."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    client = _grading_client()(nb, timeout=cell_timeout, kernel_name="python3",
                               allow_errors=True, interrupt_on_timeout=True,
                               resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute()
    except DeadKernelError:
        return "the kernel died (the student's code crashed it)"
    except CellTimeoutError:
        return (f"a cell ran past the {cell_timeout} s cell timeout and did not stop when "
                "interrupted (a GPU kernel that never ends?): the notebook was stopped there")
    except Exception as err:  # noqa: BLE001 - nbclient's own failures end this notebook only
        return f"{RUNNER_FAILED} ({type(err).__name__}: {str(err)[:200]})"
    return None


# The runner (nbclient) itself failed, not the student's code: with allow_errors=True a cell's
# error is kept in its output, so an exception out of execute() is the runner's. Seen once in a
# class of seven on an H100 (an AssertionError from nbclient's kernel-alive poll); the
# notebook is run again once before this goes into the gradebook.
RUNNER_FAILED = "the notebook runner failed, not the student's code"
RUNNER_ATTEMPTS = 2


def _why_silent(nb, cid, cell_timeout) -> str:
    """Why the checker cell ``cid`` gave no verdict, read from the executed notebook: the
    checker's own error, and the first error of an earlier cell (often the cause: a syntax
    error in the answer, a deleted setup cell)."""
    idx = next((i for i, c in enumerate(nb.cells) if c.get("id") == cid), None)
    earlier = None
    for i, cell in enumerate(nb.cells[: (idx or 0) + 1]):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            first = (cell.source.strip().splitlines() or [""])[0][:60]
            if out.get("ename") == "KeyboardInterrupt":
                if i == idx:
                    return (f"the checker ran past the {cell_timeout} s cell timeout (the "
                            "student's code did not finish) and was interrupted")
                return (f"an earlier cell (starting {first!r}) ran past the {cell_timeout} s "
                        "cell timeout and was interrupted")
            what = f"{out.get('ename')}: {out.get('evalue', '')[:200]}"
            if i == idx:
                return (f"the checker raised {what}"
                        + (f", after an earlier cell failed: {earlier}" if earlier else ""))
            if earlier is None and out.get("ename") != "NotImplementedError":
                earlier = f"the cell starting {first!r} raised {what}"
    return "the checker cell did not run to a verdict" + (f"; {earlier}" if earlier else "")


def grade_notebook(path: Path, source_path: Path, *, student: str, cell_timeout: int = 120,
                   notebook: str | None = None, hidden_seed: int | None = None) -> list[dict]:
    """Gradebook rows for one submitted notebook (named ``notebook`` in the gradebook,
    by default the source's name)."""
    import nbformat

    v.string(student, "student")
    v.positive_int(cell_timeout, "cell_timeout")
    path, source_path = Path(path), Path(source_path)
    if notebook is not None:
        v.string(notebook, "notebook")
    notebook = notebook or source_path.stem

    source = nbformat.read(source_path, as_version=4)
    checks = checker_cells(source)
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as err:  # noqa: BLE001 - an unreadable file is a row, not a crash
        return [_row(student, notebook, _checker_name(src), None, "no verdict",
                     f"not a readable notebook: {type(err).__name__}") for _, src in checks]
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as work:
        # A fresh, unguessable name, written into the checker cells only, in a folder apart
        # from the one the student's code runs in (not beside the course's notebooks either:
        # a relative path in a student's code reaches neither).
        for attempt in range(1, RUNNER_ATTEMPTS + 1):
            log = Path(tmp) / f"verdicts-{os.urandom(12).hex()}.jsonl"
            nb = grading_notebook(submission, source, str(log), hidden_seed)
            stopped = _run(nb, cell_timeout=cell_timeout, cwd=Path(work))
            if not (stopped or "").startswith(RUNNER_FAILED):
                break
            if attempt == RUNNER_ATTEMPTS:
                stopped += f", {attempt} times: grade this student again"
        entries = [json.loads(line) for line in log.read_text().splitlines()] \
            if log.exists() else []
    rows = []
    for cid, _ in checks:
        mine = [e for e in entries if e["cell"] == cid]
        exercise = _checker_name(dict(checks)[cid])
        if not mine:
            rows.append(_row(student, notebook, exercise, None, "no verdict",
                             stopped or _why_silent(nb, cid, cell_timeout)))
            continue
        # One row per exercise: the checker cell's own verdict is the last it gives (any
        # other verdict logged meanwhile came from inside it).
        e = mine[-1]
        status = "not implemented" if e["not_implemented"] else "graded"
        rows.append(_row(student, notebook, exercise, e, status, e.get("first_failure") or ""))
    return rows


def _row(student, notebook, exercise, entry, status, detail) -> dict:
    passed = entry["passed"] if entry else 0
    total = entry["passed"] + entry["failed"] if entry else 0
    points = entry.get("points", passed) if entry else 0
    possible = entry.get("possible", total) if entry else 0
    return {"student": student, "notebook": notebook, "exercise": exercise, "passed": passed,
            "total": total, "points": points, "possible": possible,
            "score": round(points / possible, 3) if possible else 0.0,
            "status": status, "graded_on": (entry or {}).get("on", ""), "detail": detail,
            "report": (entry or {}).get("report", "")}


def grade(submissions: Path, *, source: Path = Path("solutions"), cell_timeout: int = 120,
          progress=print, hidden_seed: int | None = None) -> list[dict]:
    """Gradebook rows for every student folder of ``submissions``.

    Every student meets the same hidden cases, drawn from ``hidden_seed`` (from a fresh seed
    if None, told through ``progress``): grading again with the same seed gives the same
    cases."""
    for name, val in (("submissions", submissions), ("source", source)):
        if not isinstance(val, (str, os.PathLike)) or not str(val).strip():
            raise TypeError(f"{name} must be a folder path, not {type(val).__name__} ({val!r}).")
    submissions, source = Path(submissions), Path(source)
    v.positive_int(cell_timeout, "cell_timeout")
    if hidden_seed is None:
        import secrets

        hidden_seed = 2 + secrets.randbelow(10**6)  # never a visible seed (0 or 1)
        if progress:
            progress(f"hidden cases drawn from seed {hidden_seed} (--seed {hidden_seed} grades "
                     "again with the same cases)")
    v.integer(hidden_seed, "hidden_seed", minimum=2)
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions={submissions} is not a folder: pass the folder "
                                "with one subfolder per student.")
    if not source.is_dir():
        raise FileNotFoundError(f"source={source} is not a folder: pass the course's "
                                "solutions/ (the chapters, with the checker cells).")
    students = sorted(p for p in submissions.iterdir() if p.is_dir()
                      and not p.name.startswith("."))
    if not students:
        raise FileNotFoundError(f"no student folders in {submissions}: expected "
                                f"{submissions}/<student>/<NN_chapter>.ipynb.")
    # Each student's files by the course notebook they are (Colab's "Copy of ...", a
    # browser's "... (1)"); of two files for one notebook the newest is graded.
    plan, strays = {}, []
    for st in students:
        for path in sorted(st.glob("*.ipynb")):
            name = course_name(path.name)
            if not (source / name).is_file():
                strays.append((st.name, path))
                continue
            plan.setdefault(st.name, {}).setdefault(name, []).append(path)
    expected = sorted({name for mine in plan.values() for name in mine})
    rows = []
    jobs = [(st.name, name) for st in students for name in expected]
    for k, (student, name) in enumerate(jobs, 1):
        src = source / name
        files = sorted(plan.get(student, {}).get(name, []), key=lambda p: p.stat().st_mtime)
        t0 = time.perf_counter()
        checks = checker_cells(_read(src))
        if not checks:
            # A section without exercises (chapter 5.2): nothing to run or score, but the
            # student who handed it in keeps a row, with the reason, not silence.
            rows.append(_row(student, src.stem, "-", None, "not graded",
                             f"{name} has no exercises: nothing in it is graded"
                             if files else f"no {name} in {submissions / student} (it has no "
                             "exercises, so nothing is lost)"))
        elif not files:
            rows += [_row(student, src.stem, _checker_name(code), None, "missing",
                          f"no {name} in {submissions / student}")
                     for _, code in checks]
        else:
            got = grade_notebook(files[-1], src, student=student, cell_timeout=cell_timeout,
                                 hidden_seed=hidden_seed)
            if len(files) > 1:
                also = ", ".join(p.name for p in files[:-1])
                for r in got:
                    r["detail"] = (f"graded {files[-1].name}, the newest; also handed in: "
                                   f"{also}. " + r["detail"]).strip()
            rows += got
        if progress:
            progress(f"[{k}/{len(jobs)}] {student}/{name}: {time.perf_counter() - t0:.1f} s")
    for student, path in strays:
        rows.append(_row(student, path.stem, "-", None, "not graded",
                         f"{path.name} is not a notebook of the course ({source}); rename it "
                         "to the chapter's file name to have it graded"))
    return rows


def course_name(filename: str) -> str:
    """The course notebook a submitted file is: ``Copy of 03_dram (2).ipynb`` is
    ``03_dram.ipynb``."""
    import re

    v.string(filename, "filename")
    stem = filename[:-6] if filename.lower().endswith(".ipynb") else filename
    stem = re.sub(r"^(copy of\s+)+", "", stem.strip(), flags=re.I)
    stem = re.sub(r"(\s*\(\d+\)|-checkpoint)+$", "", stem)
    return stem.strip() + ".ipynb"


def _read(path):
    import nbformat

    return nbformat.read(path, as_version=4)


def outputs(out: Path) -> tuple[Path, Path, Path]:
    """What a gradebook ``out`` comes with: ``(gradebook, details, feedback folder)``, e.g.
    ``gradebook.csv``, ``gradebook-details.csv`` and ``gradebook-feedback/``."""
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise TypeError(f"out must be a file path such as gradebook.csv, not "
                        f"{type(out).__name__} ({out!r}).")
    out = Path(out)
    return out, out.with_name(f"{out.stem}-details.csv"), out.with_name(f"{out.stem}-feedback")


def _refuse_existing(out: Path, force: bool) -> None:
    """Refuse a folder for ``out``, and (without ``force``) any output that exists already:
    checked before grading, so an hour of grading never ends in a refusal."""
    out, details, feedback = outputs(out)
    if out.is_dir():
        raise ValueError(f"out={out} is a folder; give the gradebook a file name such as "
                         f"{out / 'gradebook.csv'}.")
    if details.is_dir():
        raise ValueError(f"{details} is a folder; the gradebook's details go there: choose "
                         "another --out.")
    if feedback.exists() and not feedback.is_dir():
        raise ValueError(f"{feedback} is a file; the feedback folder goes there: choose "
                         "another --out.")
    there = [p for p in (out, details, feedback) if p.exists()]
    if there and not force:
        raise FileExistsError(f"{', '.join(map(str, there))} exist{'s' if len(there) == 1 else ''}"
                              ": pass --force to replace, or another --out.")


def summary(rows: list[dict]) -> tuple[list[str], list[dict]]:
    """The gradebook: one row per student, one column per exercise (``notebook/exercise``)
    with its score (the fraction of its checks' points earned; 0 where no verdict or no
    notebook), then the total and the number of exercises."""
    rows = v.sequence(rows, "rows", empty=True)
    exercises, students = [], []
    for i, r in enumerate(rows):
        v.mapping(r, f"rows[{i}]")
        if r.get("student") not in students:
            students.append(r.get("student"))
        if r.get("status") != "not graded":
            key = f"{r['notebook']}/{r['exercise']}"
            if key not in exercises:
                exercises.append(key)
    table = []
    for st in students:
        mine = {f"{r['notebook']}/{r['exercise']}": float(r["score"]) for r in rows
                if r.get("student") == st and r.get("status") != "not graded"}
        line = {"student": st, **{e: round(mine.get(e, 0.0), 3) for e in exercises}}
        line["total"] = round(sum(mine.get(e, 0.0) for e in exercises), 3)
        line["out_of"] = len(exercises)
        table.append(line)
    return ["student", *exercises, "total", "out_of"], table


def feedback(rows: list[dict], student: str) -> str:
    """The Markdown feedback for ``student``: each exercise's score and status, and the
    checker's report (or why there was none)."""
    v.string(student, "student")
    lines = [f"# Feedback for {student}", ""]
    for r in (r for r in rows if r.get("student") == student):
        lines.append(f"## {r['notebook']}: {r['exercise']}")
        lines.append("")
        lines.append(f"Score {float(r['score']):.0%} ({float(r['points'] or 0):g} of "
                     f"{float(r['possible'] or 0):g} "
                     f"points), {r['status']}"
                     + (f", graded on {r['graded_on']}" if r.get("graded_on") else "") + ".")
        lines.append("")
        if r.get("report"):
            lines += ["```text", r["report"].rstrip(), "```", ""]
        if r.get("detail") and (r["status"] != "graded" or not r.get("report")):
            lines += [r["detail"], ""]  # why there is no report, or what the rows add
    return "\n".join(lines)


def _csv_text(columns, rows) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _write_file(path: Path, text: str) -> None:
    """``text`` to ``path``, whole or not at all, with a new file's normal permissions."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, default_file_mode())  # as readable as any new file, not private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_gradebook(rows: list[dict], out: Path, *, force: bool = False) -> Path:
    """Write the gradebook ``out`` (one row per student, a column per exercise), its details
    (``<out>-details.csv``: one row per student, notebook and exercise) and a feedback file
    per student (``<out>-feedback/<student>.md``). Each file is written whole or not at
    all, and nothing existing is replaced unless forced."""
    import shutil

    rows = v.sequence(rows, "rows", empty=True)
    for i, r in enumerate(rows):
        v.mapping(r, f"rows[{i}]")
    v.boolean(force, "force")
    _refuse_existing(out, force)
    out, details, feedback_dir = outputs(out)
    columns, table = summary(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    # The feedback folder is built apart and moved into place in one rename.
    staging = Path(tempfile.mkdtemp(prefix=f".{feedback_dir.name}.", dir=out.parent))
    try:
        for student in dict.fromkeys(r["student"] for r in rows):
            _write_file(staging / f"{_safe_name(student)}.md", feedback(rows, student))
        os.chmod(staging, default_file_mode(0o777))  # mkdtemp's folder is private
        _write_file(details, _csv_text(COLUMNS, rows))
        _write_file(out, _csv_text(columns, table))
        if feedback_dir.exists():
            old = feedback_dir.with_name(f".{feedback_dir.name}.old-{os.urandom(4).hex()}")
            feedback_dir.rename(old)
            staging.rename(feedback_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(feedback_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _safe_name(student: str) -> str:
    """A student folder's name as a file name (it came from a folder name already; this
    only guards against a path separator)."""
    return student.replace("/", "_").replace("\\", "_") or "_"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.grade", description=__doc__.split("\n")[0])
    ap.add_argument("submissions", help="folder with one subfolder of notebooks per student")
    ap.add_argument("--source", default="solutions",
                    help="the course's chapters, with the checker cells (default: solutions/)")
    ap.add_argument("--out", default="gradebook.csv", help="the gradebook (default: gradebook.csv)")
    ap.add_argument("--cell-timeout", type=int, default=120,
                    help="seconds a cell may run before it is interrupted (default: 120)")
    ap.add_argument("--force", action="store_true", help="replace an existing gradebook")
    ap.add_argument("--seed", type=int, default=None,
                    help="the seed of the hidden cases, the same for every student (default: a "
                         "fresh one, printed); give the printed one to grade again alike")
    args = ap.parse_args(argv)
    try:
        _refuse_existing(Path(args.out), args.force)  # before an hour of grading, not after
        from .device import info

        here = info()
        print(f"grading on {here.name}" + (": the notebooks' kernels run on the simulator, "
                                           "performance checks are skipped"
                                           if here.simulated else ""),
              file=sys.stderr, flush=True)
        rows = grade(Path(args.submissions), source=Path(args.source),
                     cell_timeout=args.cell_timeout, hidden_seed=args.seed,
                     progress=lambda line: print(line, file=sys.stderr, flush=True))
        write_gradebook(rows, Path(args.out), force=args.force)
    except (FileNotFoundError, FileExistsError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    _, details, feedback_dir = outputs(Path(args.out))
    print(f"wrote {args.out} (one row per student), {details} ({len(rows)} rows: "
          + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
          + f") and {feedback_dir}/ (one file per student)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
