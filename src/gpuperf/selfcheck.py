"""``python -m gpuperf.selfcheck``: run the course the way a student does, and say what broke.

Every chapter notebook is executed top to bottom in a fresh Jupyter kernel, then every
student copy made by ``gpuperf.assign`` (solutions replaced by stubs). In each run:

* every "measure live" button of an explorer is pressed once (``GPUPERF_SELFCHECK_LOG``
  makes ``gpuperf.widgets.explore`` press it and log the outcome);
* a cell error fails the notebook (in a student copy, only ``NotImplementedError`` from a
  stub is expected);
* anything printed to stderr fails it, unless the cell is tagged ``allow-stderr`` (a cell
  that shows a warning on purpose);
* a checker that rejects the chapter's own reference solution fails it (a cell tagged
  ``expect-reject`` shows a wrong kernel rejected on purpose: there, a pass fails it); in a student copy
  each checker must answer a stub with "not implemented yet", never a traceback;
* a notebook over its time budget (``--budget``, 60 s) fails it.

It prints one row per notebook and writes the table, with the GPU, versions, date and
commit, to ``src/gpuperf/data/selfcheck-<gpu>.json`` (``--out`` to change). On a machine
without a GPU it runs in the simulator and says so; the shipped result is a GPU's.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ._mode import SIMULATOR_BANNER
from .nbtools import EXPECT_REJECT, client_class

ALLOW_STDERR = "allow-stderr"
PASS_MARK, FAIL_MARK = "\u2713", "\u2717"
_STUB = "not implemented yet"
SLOW_CELL_S = 5.0


@dataclass
class _Run:
    """What one execution of one notebook did."""

    notebook: str
    copy: str  # "chapter" or "student"
    seconds: float = 0.0
    cells: int = 0
    live_pressed: int = 0
    live_failed: int = 0
    checkers_passed: int = 0
    checkers_failed: int = 0
    stubs: int = 0
    problems: list[str] = field(default_factory=list)
    cell_seconds: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def _text(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return data.get("text/plain", "") if isinstance(data, dict) else ""


def _analyse(nb, run: _Run, *, student: bool) -> _Run:
    """Read an executed notebook's outputs into ``run`` (problems, checkers, stubs)."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                if student and out.get("ename") == "NotImplementedError":
                    run.stubs += 1
                    continue
                run.problems.append(f"cell {i}: {out.get('ename')}: {out.get('evalue', '')[:200]}")
                continue
            if kind == "stream" and out.get("name") == "stderr" and ALLOW_STDERR not in tags:
                # The package's one line saying it runs on the simulator is expected there.
                lines = [ln for ln in out.get("text", "").splitlines()
                         if ln.strip() and ln.strip() != SIMULATOR_BANNER]
                if lines:
                    run.problems.append(f"cell {i}: stderr: {lines[0][:200]}")
                continue
            expect_reject = EXPECT_REJECT in tags
            for line in _text(out).splitlines():
                if expect_reject:
                    if line.startswith(f"{PASS_MARK} "):
                        run.problems.append(f"cell {i}: the checker accepts the wrong kernel "
                                            f"this cell shows it rejecting: {line[:200]}")
                    continue
                if line.startswith(f"{PASS_MARK} "):
                    run.checkers_passed += 1
                elif line.startswith(f"{FAIL_MARK} "):
                    run.checkers_failed += 1
                    if not student:
                        run.problems.append(f"cell {i}: the checker rejects the chapter's own "
                                            f"solution: {line[:200]}")
                elif not student and line.startswith(f"  {FAIL_MARK} "):
                    run.problems.append(f"cell {i}:   {line.strip()[:300]}")
                elif student and line.startswith(f"  {FAIL_MARK} "):
                    if _STUB in line:
                        run.stubs += 1
                    else:
                        run.problems.append(f"cell {i}: a stub got more than 'not implemented "
                                            f"yet': {line.strip()[:200]}")
                elif line.startswith("Traceback (most recent call last)"):
                    run.problems.append(f"cell {i}: a traceback was printed")
    return run


# How long one wait on a kernel channel may block before it looks again (seconds).


def _execute(path: Path, *, student: bool, budget: float, cell_timeout: int,
            log_dir: Path) -> _Run:
    """Execute one notebook in a fresh kernel and analyse it."""
    import nbformat
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    run = _Run(path.stem, "student" if student else "chapter")
    nb = nbformat.read(path, as_version=4)
    run.cells = sum(c.cell_type == "code" for c in nb.cells)
    log = log_dir / f"{path.stem}-{run.copy}.jsonl"
    log.unlink(missing_ok=True)
    os.environ["GPUPERF_SELFCHECK_LOG"] = str(log)  # the kernel inherits it
    started: dict = {}

    def cell_start(cell, cell_index, **_):
        started["index"], started["t"] = cell_index, time.perf_counter()

    def cell_done(cell, cell_index, **_):
        took = time.perf_counter() - started.get("t", time.perf_counter())
        run.cell_seconds[str(cell_index)] = round(took, 2)
        if took >= SLOW_CELL_S:  # long work shows progress
            print(f"      cell {cell_index}: {took:.1f} s", file=sys.stderr, flush=True)

    client = client_class()(nb, timeout=cell_timeout, kernel_name="python3",
                            allow_errors=student, on_cell_start=cell_start,
                            on_cell_executed=cell_done,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as err:
        run.problems.append(f"stopped at an error: {str(err).strip().splitlines()[-1][:300]}")
    except (CellTimeoutError, DeadKernelError, TimeoutError) as err:
        run.problems.append(f"stopped in cell {started.get('index')}: {type(err).__name__}: "
                            f"{str(err)[:200]}")
    except Exception as err:  # nbclient's own clean-up can fail after a dead kernel
        run.problems.append(f"stopped in cell {started.get('index')}: the kernel died or "
                            f"nbclient failed ({type(err).__name__}: {str(err)[:200]})")
    finally:
        run.seconds = round(time.perf_counter() - t0, 1)
        os.environ.pop("GPUPERF_SELFCHECK_LOG", None)
    _analyse(nb, run, student=student)
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            run.live_pressed += 1
            if not entry["ok"]:
                run.live_failed += 1
                run.problems.append(f"live measurement in {entry['explorer']} failed: "
                                    f"{entry['error'][:200]}")
    if run.seconds > budget:
        run.problems.append(f"took {run.seconds:.0f} s, over the {budget:.0f} s budget")
    return run


def _versions() -> dict:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for pkg in ("numba", "numba-cuda", "numpy", "llvmlite", "ipywidgets", "ipykernel",
                "ipython", "jupyter_client", "nbclient", "traitlets", "matplotlib",
                "cuda-bindings", "cuda-core", "cuda-pathfinder", "nvidia-cuda-nvcc-cu12",
                "nvidia-cuda-nvrtc-cu12", "nvidia-nvjitlink-cu12"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    try:  # the driver decides which PTX it can load
        out["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0] or None
    except (OSError, IndexError, subprocess.SubprocessError):
        out["driver"] = None
    return out


def _commit(root: Path) -> str | None:
    if os.environ.get("GPUPERF_COMMIT"):
        return os.environ["GPUPERF_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None



# The files a self-check row depends on: its chapter's two notebook copies and the source of
# every module the chapter's code reaches through the import graph (``gpuperf.depgraph``), so a
# change makes stale only the rows of the chapters that import what changed. Anything else
# under the notebook folders (a data file a chapter might read) counts for every row.
# ``git diff`` is asked about these paths (tools/device/tree_hash.py lists the same).
WATCHED = ("notebooks", "solutions", "src/gpuperf")
_CHAPTER_FILE = re.compile(r"(notebooks|solutions)/[^/]+\.ipynb")
_REPO = Path(__file__).resolve().parents[2]  # the checkout this package runs from


def row_commit(doc: dict, row: dict) -> str | None:
    """The commit a self-check row ran: its own, or (older files) the whole run's."""
    from . import validate as v

    v.mapping(doc, "doc")
    v.mapping(row, "row")
    return row.get("commit") or doc.get("commit")


def changed_files(since: str, until: str = "HEAD", root: Path | None = None) -> list[str]:
    """The watched files whose content differs between commits ``since`` and ``until``
    (``git diff``: a change made and undone in between is no change). Raises
    subprocess.CalledProcessError when git does not know a commit."""
    from . import validate as v

    v.string(since, "since")
    v.string(until, "until")
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"root must be a path (the repository's folder) or None, not "
                        f"{type(root).__name__}.")
    out = subprocess.run(["git", "diff", "--name-only", since, until, "--", *WATCHED],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def notebook_inputs(notebook: str, root: Path | None = None) -> set:
    """The repository files a self-check row of chapter ``notebook`` depends on (paths
    relative to ``root``, the checkout; default: this package's): both copies of the notebook
    and every module of the package its code reaches (``gpuperf.depgraph``)."""
    from . import depgraph
    from . import validate as v

    v.string(notebook, "notebook")
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"root must be a path (the repository's folder) or None, not "
                        f"{type(root).__name__}.")
    return depgraph.notebook_inputs(notebook, _REPO if root is None else Path(root))


def stale_inputs(notebook: str, changed, inputs=None) -> list[str]:
    """Of the ``changed`` files, those a self-check row of chapter ``notebook`` depends on:
    its ``inputs`` (default: ``notebook_inputs(notebook)``), and any file under the notebook
    folders that is not another chapter's notebook."""
    from . import validate as v

    v.string(notebook, "notebook")
    changed = [v.string(p, f"changed[{i}]")
               for i, p in enumerate(v.sequence(changed, "changed", empty=True))]
    if inputs is None:
        inputs = notebook_inputs(notebook)
    else:
        inputs = {v.string(p, "inputs[...]") for p in v.sequence(inputs, "inputs", empty=True)}
    own = {f"notebooks/{notebook}.ipynb", f"solutions/{notebook}.ipynb"}
    return [p for p in changed
            if p in inputs or p in own
            or (p.startswith(("notebooks/", "solutions/")) and not _CHAPTER_FILE.fullmatch(p))]


def stale_rows(doc: dict, root: Path | None = None) -> list[dict]:
    """The rows of the self-check ``doc`` whose inputs changed since the commit they ran:
    ``{"notebook", "copy", "commit", "changed": [files]}``, in the file's order. A row whose
    commit this repository lacks is stale, with ``changed`` naming that."""
    from . import validate as v

    v.mapping(doc, "doc")
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"root must be a path (the repository's folder) or None, not "
                        f"{type(root).__name__}.")
    root = _REPO if root is None else Path(root)
    diffs: dict = {}
    inputs: dict = {}
    out = []
    for r in doc.get("notebooks", []):
        commit = row_commit(doc, r)
        if commit not in diffs:
            try:
                diffs[commit] = changed_files(commit, "HEAD", root=root) if commit else None
            except (OSError, subprocess.CalledProcessError):  # no git, or no such commit
                diffs[commit] = None
        if diffs[commit] is None:
            out.append({"notebook": r["notebook"], "copy": r["copy"], "commit": commit,
                        "changed": [f"commit {commit} is not in this repository"]})
            continue
        name = r["notebook"]
        if name not in inputs:
            try:
                inputs[name] = notebook_inputs(name, root)
            except ValueError as err:  # a chapter that no longer exists, or no package
                inputs[name] = str(err)
        if isinstance(inputs[name], str):
            out.append({"notebook": name, "copy": r["copy"], "commit": commit,
                        "changed": [f"its inputs cannot be read: {inputs[name]}"]})
            continue
        files = stale_inputs(name, diffs[commit], inputs=inputs[name])
        if files:
            out.append({"notebook": name, "copy": r["copy"], "commit": commit, "changed": files})
    return out


def chapter_status(folder: Path | None = None, root: Path | None = None) -> list[dict]:
    """One row per chapter notebook of the shipped self-check on the course's versions
    (``data/selfcheck-<gpu>.json``, not the Colab-like run): ``chapter``, ``status`` ("checked
    on <GPU> at <commit>", with "(experiments replayed)" after the GPU for a MEASURE = False
    run, or "changed since its last GPU check (<GPU>, <commit>)") and
    ``changed`` (the first files that changed, if any)."""
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"root must be a path (the repository's folder) or None, not "
                        f"{type(root).__name__}.")
    rows = []
    for path, doc in _shipped_files(folder):
        if path.stem.endswith("-colab"):
            continue
        stale = {(r["notebook"], r["copy"]): r for r in stale_rows(doc, root)}
        gpu = doc.get("gpu") or "a GPU"
        for name in sorted({r["notebook"] for r in doc.get("notebooks", [])}):
            mine = [r for r in doc["notebooks"] if r["notebook"] == name]
            commits = sorted({str(row_commit(doc, r))[:7] for r in mine})
            ok = all(r.get("ok") for r in mine)
            changed = sorted({f for r in mine for f in stale.get((name, r["copy"]), {})
                              .get("changed", [])})
            where = f"{gpu}, {'/'.join(commits)}"
            if changed:
                status = f"changed since its last GPU check ({where})"
            elif ok:
                how = " (experiments replayed)" if doc.get("measure") is False else ""
                status = f"checked on {gpu}{how} at {'/'.join(commits)}"
            else:
                status = f"failed its last GPU check ({where})"
            rows.append({"chapter": name, "status": status, "changed": changed[:3]})
    return rows


def _chapter_titles(root: Path) -> dict:
    """``{notebook name: its title}`` in the book's order (``_toc.yml``), from the first
    heading of each notebook in ``root``'s ``notebooks/``; empty where those are missing."""
    toc = root / "_toc.yml"
    if not toc.is_file():
        return {}
    titles = {}
    for name in re.findall(r"file:\s*notebooks/(\S+)", toc.read_text(encoding="utf-8")):
        try:
            cells = json.loads((root / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError):
            continue
        heads = [ln[2:].strip() for c in cells if c.get("cell_type") == "markdown"
                 for ln in "".join(c.get("source", "")).splitlines() if ln.startswith("# ")]
        if heads:
            titles[name] = heads[0]
    return titles


def show_chapter_status(folder: Path | None = None, root: Path | None = None) -> None:
    """``chapter_status`` as a table (HTML in Jupyter): each chapter by its title, in the
    book's order, where the checkout's notebooks give them (by file name otherwise)."""
    rows = chapter_status(folder, root)
    if not rows:
        print("No self-check results are shipped yet: run `python -m gpuperf.selfcheck` on a GPU.")
        return
    titles = _chapter_titles(_REPO if root is None else Path(root))
    order = {name: i for i, name in enumerate(titles)}
    rows = sorted(rows, key=lambda r: order.get(r["chapter"], len(order)))
    names = [titles.get(r["chapter"], r["chapter"]) for r in rows]
    _show_table(["chapter", "GPU self-check"], [[n, r["status"]] for n, r in zip(names, rows)],
                "gp-table", plain="\n".join(f"{n}: {r['status']}" for n, r in zip(names, rows)))


def _table(runs: list[_Run]) -> str:
    head = (f"{'notebook':<24} {'copy':<8} {'s':>6} {'cells':>5} {'live':>6} {'checkers':>9} "
            f"{'stubs':>5}  result")
    lines = [head, "-" * len(head)]
    for r in runs:
        live = f"{r.live_pressed - r.live_failed}/{r.live_pressed}"
        checks = f"{r.checkers_passed}/{r.checkers_passed + r.checkers_failed}"
        result = "ok" if r.ok else f"FAIL ({len(r.problems)})"
        lines.append(f"{r.notebook:<24} {r.copy:<8} {r.seconds:>6.1f} {r.cells:>5} {live:>6} "
                     f"{checks:>9} {r.stubs:>5}  {result}")
    return "\n".join(lines)


_DATA = Path(__file__).resolve().parent / "data"


def _shipped_files(folder) -> list[tuple[Path, dict]]:
    """``(path, contents)`` of each ``selfcheck-*.json`` in ``folder`` (default: the
    package's data): the course's own versions first, then the Colab-like run(s)."""
    if folder is not None and not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"folder must be a path, not {type(folder).__name__}.")
    folder = _DATA if folder is None else Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder={str(folder)!r} does not exist; pass the folder that "
                         "holds the selfcheck-*.json files (default: the package's data).")
    paths = sorted(folder.glob("selfcheck-*.json"),
                   key=lambda p: (p.stem.endswith("-colab"), p.name))
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def _commits_label(data: dict) -> str | None:
    """The run's commit, and where rows kept an older one (their chapters unchanged since),
    how many and which: "abc1234 (30 of 32 rows at 9f8e7d6)"."""
    newest = data.get("commit")
    runs = data.get("notebooks", [])
    older: dict = {}
    for r in runs:
        c = row_commit(data, r)
        if c != newest:
            older[c] = older.get(c, 0) + 1
    if not older:
        return newest
    return f"{newest} (" + "; ".join(f"{n} of {len(runs)} rows at {c}"
                                      for c, n in sorted(older.items())) + ")"


def _changed_since(doc: dict, root: Path | None = None) -> str:
    """How many of the chapters a self-check ran were changed after it (as
    :func:`chapter_status` counts them), in words for the setup page's table."""
    chapters = {r["notebook"] for r in doc.get("notebooks", [])}
    stale = {r["notebook"] for r in stale_rows(doc, root)}
    if not stale:
        return "none: every chapter is as it ran"
    return (f"{len(stale)} of {len(chapters)}: not run on a GPU as they now stand "
            "(listed on Recorded devices)")


def shipped(folder: Path | None = None) -> list[dict]:
    """One row per self-check result shipped with the package (``data/selfcheck-*.json``):
    where it ran, what passed, the slowest notebook against the budget, and the versions."""
    rows = []
    for path, data in _shipped_files(folder):
        runs = data.get("notebooks", [])
        versions = data.get("versions", {})

        def passed(copy, runs=runs):
            sel = [r for r in runs if r.get("copy") == copy]
            return f"{sum(bool(r.get('ok')) for r in sel)} of {len(sel)}"

        slow = max(runs, key=lambda r: r.get("seconds", 0)) if runs else None
        budget = data.get("budget_s")
        rows.append({
            "environment": ("Colab-like (Colab's preinstalled versions)"
                            if path.stem.endswith("-colab") else "the course's versions"),
            "GPU": data.get("gpu"), "driver": versions.get("driver"),
            "date": str(data.get("date") or "")[:10], "commit": _commits_label(data),
            "chapter notebooks passed": passed("chapter"),
            "student copies passed": passed("student"),
            "chapters changed since": _changed_since(data),
            "measurements": ("recorded (MEASURE = False: kernels and checkers ran on the GPU, "
                             "experiments were replayed)" if data.get("measure") is False
                             else "live (every measure-live button pressed)"),
            "slowest notebook": (f"{slow['notebook']} ({slow['copy']}): {slow['seconds']:.0f} s"
                                 + (f" of {budget:.0f} s allowed" if budget else "")) if slow else None,
            **{name: versions.get(name) for name in ("python", "numba", "numba-cuda", "numpy",
                                                     "ipywidgets", "matplotlib")},
            "CUDA toolkit": (f"{versions['nvidia-cuda-nvcc-cu12']} (pip wheels)"
                             if versions.get("nvidia-cuda-nvcc-cu12") else "the machine's own"),
            "file": path.name,
        })
    return rows


def show_shipped(folder: Path | None = None) -> None:
    """The shipped self-check results as a table, one column per run (HTML in Jupyter)."""

    rows = shipped(folder)
    if not rows:
        print("No self-check results are shipped yet: run `python -m gpuperf.selfcheck` on a GPU.")
        return
    keys = [k for k in rows[0] if k != "environment"]
    # One column per run, one row per key (transposed: the runs are few, the keys many).
    _show_table(["", *(r["environment"] for r in rows)],
                [[k, *(r.get(k) for r in rows)] for k in keys], "gp-table gp-devices",
                plain="\n\n".join("\n".join(f"{k}: {v}" for k, v in r.items()) for r in rows))


def _show_table(head: list, body: list[list], classes: str, plain: str) -> None:
    """An HTML table in Jupyter (the first column as row headings), ``plain`` elsewhere."""
    import html

    try:
        from IPython.display import HTML, display
    except ImportError:
        print(plain)
        return

    def cell(tag, value):
        return f"<{tag}>{html.escape('-' if value is None else str(value))}</{tag}>"

    head_html = "".join(cell("th", h) for h in head)
    body_html = "".join("<tr>" + cell("th", row[0]) + "".join(cell("td", x) for x in row[1:])
                        + "</tr>" for row in body)
    display(HTML(f"<table class='{classes}'><thead><tr>{head_html}</tr></thead>"
                 f"<tbody>{body_html}</tbody></table>"))


def gpu_seconds(folder: Path | None = None) -> list[dict]:
    """Seconds each notebook took in the shipped self-checks (a student's run top to bottom,
    measurements included): one row per notebook, one column per environment and copy, and a
    last row with the totals. A run made with ``MEASURE = False`` (``GPUPERF_LIVE=0``,
    shipped as ``replay-<gpu>.json``) adds its own column when it ran the same commit as the
    shipped self-checks (another commit's notebooks are other notebooks). For planning a
    class's GPU time."""
    columns, seconds = [], {}
    shipped = _shipped_files(folder)
    commits = {data.get("commit") for _, data in shipped}
    replays = [(p, d) for p, d in _replay_files(folder) if not shipped or d.get("commit") in commits]
    for path, data in shipped + replays:
        where = ("Colab-like" if path.stem.endswith("-colab") else "course versions")
        if data.get("measure") is False:
            where += ", MEASURE = False"
        if (data.get("jobs") or 1) > 1:   # notebooks run side by side share the GPU and CPUs
            where += f", {data['jobs']} at once"
        gpu = str(data.get("gpu") or "?").replace("NVIDIA ", "")
        for copy in ("chapter", "student"):
            col = f"{copy} copy, {where}, {gpu}"
            runs = [r for r in data.get("notebooks", []) if r.get("copy") == copy]
            if runs or data.get("measure") is not False:  # a replay run: its copies only
                columns.append(col)
            for r in runs:
                seconds.setdefault(r["notebook"], {})[col] = r.get("seconds")
    rows = [{"notebook": nb, **{c: seconds[nb].get(c) for c in columns}}
            for nb in sorted(seconds)]
    if rows:
        rows.append({"notebook": "all notebooks",
                     **{c: round(sum(r[c] or 0 for r in rows), 1) for c in columns}})
    return rows


def show_gpu_seconds(folder: Path | None = None) -> None:
    """:func:`gpu_seconds` as a table of seconds (HTML in Jupyter)."""

    rows = gpu_seconds(folder)
    if not rows:
        print("No self-check results are shipped yet: run `python -m gpuperf.selfcheck` on a GPU.")
        return
    keys = list(rows[0])
    _show_table(keys, [[r[k] for k in keys] for r in rows], "gp-table",
                plain="\n".join("  ".join(str(r[k]) for k in keys) for r in rows))


def _replay_files(folder) -> list[tuple[Path, dict]]:
    folder = _DATA if folder is None else Path(folder)
    return [(p, json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(folder.glob("replay-*.json"))]


# NVIDIA's data sheet for the Tesla T4 (Colab's GPU): 320 GB/s of GDDR6 bandwidth. Used only
# to bound a planning estimate; no figure of the course comes from it.
T4_DATASHEET_GBPS = 320.0


def t4_estimate(folder: Path | None = None) -> list[dict]:
    """A planning range for a student copy on a Colab T4, per notebook, in seconds.

    From the shipped runs of the student copies on one GPU with the course's versions,
    measuring (``live``) and with ``MEASURE = False`` (``replay``): the T4 takes at least
    ``live`` (it is no faster), and at most ``replay + (live - replay) x r``, where ``r`` is
    that GPU's theoretical DRAM bandwidth over the T4's data-sheet bandwidth: as if every
    second spent measuring were GPU time slowed down by the bandwidth ratio. Most of it is
    not (compiling, timing loops that run for a fixed time), so the truth is nearer the
    low end. The host CPU is the self-check's, not Colab's. Both runs must come from one
    commit (the same notebooks); otherwise there is no estimate."""
    from . import records, store

    live_runs = [d for p, d in _shipped_files(folder) if not p.stem.endswith("-colab")]
    replays = _replay_files(folder)
    if not live_runs or not replays:
        return []
    live_doc, replay_doc = live_runs[0], replays[0][1]
    if live_doc.get("commit") != replay_doc.get("commit"):  # two versions of the notebooks
        return []
    if live_doc.get("measure") is False:   # no measuring run to bound the T4 from below
        return []
    peak = None
    try:  # that GPU's theoretical peak, from its shipped record (None: no upper bound)
        data = records.load(store.DATA_DIR / f"{records.slug(live_doc.get('gpu') or '')}.json")
        for exp in data["experiments"].values():
            peak = peak or exp.get("provenance", {}).get("device", {}).get("peak_gbps")
    except (OSError, ValueError, KeyError, AttributeError):
        peak = None
    ratio = peak / T4_DATASHEET_GBPS if peak else None
    live = {r["notebook"]: r["seconds"] for r in live_doc.get("notebooks", [])
            if r.get("copy") == "student"}
    replay = {r["notebook"]: r["seconds"] for r in replay_doc.get("notebooks", [])
              if r.get("copy") == "student"}
    rows = []
    for nb in sorted(set(live) & set(replay)):
        measuring = max(0.0, live[nb] - replay[nb])
        rows.append({"notebook": nb, "MEASURE = False": round(replay[nb], 1),
                     "measuring": round(measuring, 1), "T4 at least": round(live[nb], 1),
                     "T4 at most": round(replay[nb] + measuring * ratio, 1) if ratio else None})
    if rows:
        rows.append({"notebook": "all notebooks",
                     **{k: round(sum(r[k] or 0 for r in rows), 1) for k in rows[0]
                        if k != "notebook"}})
    return rows


def show_t4_estimate(folder: Path | None = None) -> None:
    """:func:`t4_estimate` as a table of seconds (HTML in Jupyter)."""
    rows = t4_estimate(folder)
    shipped = [d for p, d in _shipped_files(folder) if not p.stem.endswith("-colab")]
    if not rows and shipped and shipped[0].get("measure") is False:
        print("No T4 range for this version of the notebooks: the shipped self-check ran with "
              "MEASURE = False, and a range also needs a measuring run (MEASURE = True, as the "
              "notebooks ship) of the student copies on the same GPU and commit (python -m "
              "gpuperf.selfcheck --copies student, on a GPU). Until then the times above are "
              "replay times only: a class running the notebooks as shipped takes longer.")
        return
    if not rows:
        print("No T4 range for this version of the notebooks: it needs a run of the student "
              "copies with MEASURE = False from the same commit as the shipped self-check "
              "(GPUPERF_LIVE=0 python -m gpuperf.selfcheck --copies student --out "
              "src/gpuperf/data/replay-<gpu>.json, on a GPU).")
        return
    keys = list(rows[0])
    _show_table(keys, [[r[k] for k in keys] for r in rows], "gp-table",
                plain="\n".join("  ".join(str(r[k]) for k in keys) for r in rows))


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m gpuperf.selfcheck", description=__doc__.split("\n")[0])
    p.add_argument("--notebooks", type=Path, default=Path("solutions"),
                   help="folder of chapter notebooks, with their solutions (default: solutions)")
    p.add_argument("--only", default=None,
                   help="a regular expression: run only notebooks whose name matches it")
    p.add_argument("--copies", choices=("both", "chapter", "student"), default="both",
                   help="run the chapter notebooks, their student copies, or both (default)")
    p.add_argument("--budget", type=float, default=60.0,
                   help="seconds a notebook may take (default 60)")
    p.add_argument("--cell-timeout", type=int, default=600,
                   help="seconds a single cell may take before the run is stopped (default 600)")
    p.add_argument("--out", type=Path, default=None,
                   help="where to write the JSON (default: src/gpuperf/data/selfcheck-<gpu>.json)")
    p.add_argument("--append", action="store_true",
                   help="merge into an existing --out made on the same GPU, commit and versions "
                        "(rows of the notebooks run now replace theirs): one table from several "
                        "runs")
    p.add_argument("--jobs", type=int, default=1,
                   help="notebooks run at once, each in a process of its own (default 1). More "
                        "than one only with GPUPERF_LIVE=0 (kernels and checkers on the GPU, "
                        "experiments replayed): measuring runs would share the GPU and time "
                        "each other")
    p.add_argument("--stale", action="store_true",
                   help="list the rows of --out whose inputs (their notebooks and the modules "
                        "they import) changed since the commit they ran, run exactly those "
                        "chapters, and merge them into --out (the other rows keep their "
                        "commits)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    try:
        args = _parse(argv)
    except SystemExit as err:
        return int(err.code or 0)
    folder = args.notebooks
    if not folder.is_dir():
        print(f"selfcheck: --notebooks {folder} is not a folder of notebooks.", file=sys.stderr)
        return 2
    try:
        pattern = re.compile(args.only) if args.only else None
    except re.error as err:
        print(f"selfcheck: --only {args.only!r} is not a regular expression ({err}).", file=sys.stderr)
        return 2
    if args.budget <= 0 or args.cell_timeout <= 0:
        print("selfcheck: --budget and --cell-timeout must be positive.", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"selfcheck: --jobs {args.jobs}: give 1 or more notebooks at once.", file=sys.stderr)
        return 2
    paths = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb")
                   if pattern is None or pattern.search(p.stem))
    if not paths:
        print(f"selfcheck: no chapter notebooks (NN_name.ipynb) in {folder}"
              + (f" match --only {args.only!r}" if pattern else "") + ".", file=sys.stderr)
        return 2
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        print("selfcheck: needs nbclient and nbformat (python -m pip install nbclient nbformat "
              "ipykernel).", file=sys.stderr)
        return 2

    from gpuperf import assign, device, records, store
    from gpuperf.mode import MODE, SIMULATOR

    gpu = device.info().name
    if SIMULATOR:
        print("selfcheck: no GPU here: the notebooks run on the CUDA simulator; the shipped "
              "self-check must come from a GPU.", file=sys.stderr)
    out = args.out or (store.DATA_DIR / f"selfcheck-{records.slug(gpu)}.json")
    if out.suffix != ".json" or (out.exists() and out.is_dir()):
        print(f"selfcheck: --out {out} must be a .json file.", file=sys.stderr)
        return 2
    if args.jobs > 1 and records.live_by_default():
        print(f"selfcheck: --jobs {args.jobs} runs notebooks side by side, which only a run that "
              "measures nothing may do (their live measurements would share the GPU): set "
              "GPUPERF_LIVE=0, or drop --jobs.", file=sys.stderr)
        return 2
    info = device.info()
    doc = {
        "gpu": gpu, "simulated": info.simulated, "mode": MODE,
        # False under GPUPERF_LIVE=0 (MEASURE = False): experiments replayed, not measured
        "measure": records.live_by_default(),
        "compute_capability": list(info.compute_capability) if info.compute_capability else None,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": _commit(folder.resolve().parent), "versions": _versions(),
        "budget_s": args.budget, "jobs": args.jobs, "passed": False, "notebooks": [],
    }
    earlier: list[dict] = []
    if args.stale:
        if args.append:
            print("selfcheck: --stale merges into --out already; drop --append.", file=sys.stderr)
            return 2
        try:
            old = json.loads(out.read_text(encoding="utf-8"))
            stale = stale_rows(old, root=folder.resolve().parent)
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f"selfcheck: --stale: cannot read the self-check {out} ({err}); run the "
                  "whole course once without --stale.", file=sys.stderr)
            return 2
        for key in ("gpu", "versions", "budget_s", "mode", "measure"):
            if old.get(key) != doc[key]:
                print(f"selfcheck: --stale: {out} was made with {key}={old.get(key)!r}, this run "
                      f"has {doc[key]!r}; its rows cannot be mixed with this run's. Run the whole "
                      "course without --stale (into another --out, or replacing this one).",
                      file=sys.stderr)
                return 2
        names = sorted({r["notebook"] for r in stale})
        for r in stale:
            print(f"stale: {r['notebook']} ({r['copy']}, ran at {str(r['commit'])[:7]}): "
                  + ", ".join(r["changed"][:4]) + (" ..." if len(r["changed"]) > 4 else ""),
                  file=sys.stderr)
        paths = [p for p in paths if p.stem in names]
        if not paths:
            print(f"selfcheck: --stale: no row of {out} is stale"
                  + (f" among notebooks matching --only {args.only!r}" if pattern else "")
                  + "; nothing to run.", file=sys.stderr)
            return 0
        earlier = [{**r, "commit": row_commit(old, r)} for r in old.get("notebooks", [])]
    elif args.append and out.exists():
        try:
            old = json.loads(out.read_text(encoding="utf-8"))
            earlier = list(old["notebooks"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f"selfcheck: --append: cannot read {out} ({err}); remove it or drop --append.",
                  file=sys.stderr)
            return 2
        for key in ("gpu", "commit", "versions", "budget_s", "mode", "measure"):
            if old.get(key) != doc[key]:
                print(f"selfcheck: --append: {out} was made with {key}={old.get(key)!r}, this run "
                      f"has {doc[key]!r}; a table must come from one GPU, commit and set of "
                      "versions. Write to another --out, or run everything again.", file=sys.stderr)
                return 2
    runs: list[_Run] = []

    def write() -> None:
        # After every notebook, so that a run stopped part-way still leaves what it measured.
        done = {(r.notebook, r.copy) for r in runs}
        rows = [e for e in earlier if (e.get("notebook"), e.get("copy")) not in done]
        rows += [r.as_dict() for r in runs]
        doc["notebooks"] = sorted(rows, key=lambda e: (e["copy"] != "chapter", e["notebook"]))
        doc["passed"] = bool(rows) and all(e.get("ok") for e in rows)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        tmp_out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp_out, out)

    with tempfile.TemporaryDirectory(prefix="gpuperf-selfcheck-") as tmp:
        tmp = Path(tmp)
        jobs = []
        if args.copies in ("both", "chapter"):
            jobs += [(p, False) for p in paths]
        if args.copies in ("both", "student"):
            student_dir = tmp / "student"
            student_dir.mkdir()
            import nbformat

            for p in paths:
                nbformat.write(assign.student_copy(nbformat.read(p, as_version=4)),
                               student_dir / p.name)
            jobs += [(student_dir / p.name, True) for p in paths]
        def report(k, path, student, run):
            label = f"{path.stem} ({'student copy' if student else 'chapter'})"
            print(f"[{k}/{len(jobs)}] {label}: {run.seconds:.1f} s, "
                  f"{'ok' if run.ok else 'FAIL'}", file=sys.stderr, flush=True)
            for problem in run.problems[:10]:
                print(f"      - {problem}", file=sys.stderr, flush=True)

        if args.jobs == 1:
            for k, (path, student) in enumerate(jobs, 1):
                label = f"{path.stem} ({'student copy' if student else 'chapter'})"
                print(f"[{k}/{len(jobs)}] {label} ...", file=sys.stderr, flush=True)
                # Student copies run beside the chapters (so relative paths resolve the same).
                run = _execute(path, student=student, budget=args.budget,
                               cell_timeout=args.cell_timeout, log_dir=tmp)
                runs.append(run)
                write()
                report(k, path, student, run)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            print(f"{len(jobs)} notebooks, {args.jobs} at a time ...", file=sys.stderr, flush=True)
            # Fresh interpreters (spawn): this process has touched the GPU already.
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
                futures = {pool.submit(_execute, path, student=student, budget=args.budget,
                                       cell_timeout=args.cell_timeout, log_dir=tmp): (path, student)
                           for path, student in jobs}
                for k, fut in enumerate(as_completed(futures), 1):
                    path, student = futures[fut]
                    run = fut.result()
                    runs.append(run)
                    write()
                    report(k, path, student, run)
    write()
    if earlier:
        print(f"(merged with {len(doc['notebooks']) - len(runs)} earlier row(s) of {out})")
    print(_table(runs))
    print(f"{'PASSED' if doc['passed'] else 'FAILED'} on {gpu}; written to {out}")
    return 0 if doc["passed"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
