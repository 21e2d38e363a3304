"""Judge the known answers in tests/wrong/ and tests/right/ on this machine (a GPU's, where
the unit tests only ever see the simulator): each file's checker must reject a wrong answer
and accept a right one.

    python tools/device/judge.py [--jobs N] [chapter ...]   # e.g. streams reduce; default: all

Each file is judged in a process of its own (a wrong kernel that faults on a GPU ends its
process's CUDA context, and would fail every later verdict of a shared one), ``--jobs`` of them
at once. Side by side they share the GPU, which time-slices between processes, so a speed bar
can fail for that alone: every file whose verdict came out wrong is judged again, alone, and
that verdict stands (the line says so).

A wrong file names its checker (``CHECKER``, in ``MODULE`` or the chapter's
``gpuperf.kernels.<chapter>``, with ``KWARGS`` if any); a right file names its exercise
(``NOTEBOOK``, ``LABEL``) and is judged by the exercise's checker cell, as
tests/test_chapter_solutions.py does. Prints one line per file with its verdict time, the
slowest five, and a summary; exits 1 if any verdict is wrong or took over 30 s (issue 63).
"""

import importlib
import io
import json
import os
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("GPUPERF_MODE", "auto")

from conftest import checker_call, load_answer, solution  # noqa: E402

VERDICT_LIMIT_S = 30.0

ANSWER_NAMES = ("student", "kernel", "make_kernel", "fn", "tile_reuse", "intensity_and_bound")


def _checker_module(mod, chapter: str):
    """The module named by ``MODULE``, else the chapter's, else the first kernels module that
    has the checker (the histogram exercise of chapter 8 is checked in privatization)."""
    import pkgutil

    import gpuperf.kernels

    names = [getattr(mod, "MODULE", f"gpuperf.kernels.{chapter}")]
    names += [f"gpuperf.kernels.{m.name}" for m in pkgutil.iter_modules(gpuperf.kernels.__path__)]
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        if hasattr(module, mod.CHECKER):
            return module
    raise LookupError(f"no module has {mod.CHECKER}")


def _answer(mod):
    """The answer a wrong file hands its checker: one of ``ANSWER_NAMES``, else the one
    function the file defines itself (``grid_rounds``)."""
    import inspect

    for name in ANSWER_NAMES:
        if hasattr(mod, name):
            return getattr(mod, name)
    own = [f for _, f in inspect.getmembers(mod, inspect.isfunction)
           if f.__module__ == mod.__name__]
    if len(own) != 1:
        raise LookupError(f"{mod.__name__}: name the answer one of {ANSWER_NAMES}")
    return own[0]


def _cpu_s() -> float:
    """CPU seconds of this process and of the children it waited for (the compiler's)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def judge(path: Path, expect: str) -> dict:
    mod = load_answer(path)
    out = io.StringIO()
    if hasattr(mod, "CHECKER"):
        module = _checker_module(mod, path.parent.name)
        answer = _answer(mod)
        t0, c0 = time.perf_counter(), _cpu_s()
        with redirect_stdout(out):
            report = getattr(module, mod.CHECKER)(answer, **getattr(mod, "KWARGS", {}))
    elif hasattr(mod, "LABEL"):  # the exercise's checker cell, the answer's names in place
        from test_chapter_solutions import AFTER, NEEDS_THE_CHAPTER

        with redirect_stdout(out):
            ns = solution(mod.NOTEBOOK, mod.LABEL, after=AFTER.get(mod.LABEL, ()),
                          own_cells=mod.LABEL not in NEEDS_THE_CHAPTER)
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
        call = checker_call(mod.NOTEBOOK, mod.LABEL)
        t0, c0 = time.perf_counter(), _cpu_s()
        with redirect_stdout(out):
            report = eval(call, ns)
    else:
        return {"file": str(path.relative_to(ROOT)), "verdict": "skipped"}
    got = "accept" if report else "reject"
    below_bar = getattr(mod, "BELOW_SPEED_BAR", None)
    if expect == "accept" and got == "reject" and below_bar:
        # A right answer that says it is slower than the exercise's speed bar (its reason in
        # BELOW_SPEED_BAR): on a GPU only speed cases may fail it.
        from gpuperf import exercises as ex

        kinds = {report.kinds.get(case, ex.case_kind(case)) for case, _why in report.failed}
        if kinds == {"speed"}:
            got = "accept"
            out.write(f"\n(judged right: only its speed bar failed, as the file says: {below_bar})")
    return {"file": str(path.relative_to(ROOT)), "expect": expect, "got": got,
            "verdict": "ok" if got == expect else "WRONG", "s": round(time.perf_counter() - t0, 1),
            # CPU seconds of this process: the verdict's cost on a machine shared with others
            "cpu_s": round(_cpu_s() - c0, 1),
            "output": out.getvalue()[-1500:]}


def _judge_here(path: Path, expect: str) -> dict:
    try:
        return judge(path, expect)
    except Exception as e:  # a checker that raises is a wrong verdict too
        return {"file": str(path.relative_to(ROOT)), "expect": expect,
                "verdict": "ERROR", "output": f"{type(e).__name__}: {e}"}


def _judge_apart(path: Path, expect: str) -> dict:
    """``judge(path, expect)`` in a process of its own (``--one``)."""
    import subprocess

    proc = subprocess.run([sys.executable, __file__, "--one", str(path), expect],
                          capture_output=True, text=True, timeout=600)
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{")), None)
    if line is None:
        return {"file": str(path.relative_to(ROOT)), "expect": expect, "verdict": "ERROR",
                "output": f"the judging process ended with code {proc.returncode}: "
                          f"{(proc.stdout + proc.stderr)[-1500:]}"}
    return json.loads(line)


def _files(chapters):
    for folder, expect in (("wrong", "reject"), ("right", "accept")):
        for chapter in sorted(p for p in (ROOT / "tests" / folder).iterdir() if p.is_dir()):
            if chapters and chapter.name not in chapters:
                continue
            for path in sorted(chapter.glob("*.py")):
                if path.name != "__init__.py":
                    yield path, expect


def _line(r: dict) -> str:
    return f"{r['verdict']:8s} {r.get('s', ''):>6} {r.get('cpu_s', ''):>6} {r['file']}"


def main(argv):
    from concurrent.futures import ThreadPoolExecutor

    jobs = 1
    if argv[:1] == ["--jobs"]:
        jobs, argv = int(argv[1]), argv[2:]
    files = list(_files(argv))
    results = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(lambda f: _judge_apart(*f), files):
            results.append(r)
            print(_line(r), flush=True)
    if jobs > 1:
        for i, (path, expect) in enumerate(files):
            if results[i]["verdict"] in ("WRONG", "ERROR"):
                again = _judge_apart(path, expect)
                again["first"] = {k: results[i].get(k) for k in ("verdict", "s", "output")}
                results[i] = again
                print(_line(again) + " (judged again alone: the first verdict, with the GPU "
                      f"shared, was {again['first']['verdict']})", flush=True)
    slow = [r for r in results if r.get("s", 0) > VERDICT_LIMIT_S]
    for r in slow:
        r["verdict"] = "SLOW"
    print("slowest five:", ", ".join(f"{r['file']} {r.get('s')} s ({r.get('cpu_s')} s of CPU)" for r in
                                       sorted(results, key=lambda r: -r.get("s", 0))[:5]))
    bad = [r for r in results if r["verdict"] in ("WRONG", "ERROR", "SLOW")]
    for r in bad:
        print(f"--- {r['file']} (expected {r.get('expect')}):\n{r.get('output', '')}")
    judged = sum(r["verdict"] != "skipped" for r in results)
    print(f"{judged - len(bad)} of {judged} judged right; "
          f"{sum(r['verdict'] == 'skipped' for r in results)} skipped")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "judge.json").write_text(json.dumps(results, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:  # one file, in this process: its verdict as one JSON line
        print(json.dumps(_judge_here(Path(sys.argv[2]).resolve(), sys.argv[3])))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
