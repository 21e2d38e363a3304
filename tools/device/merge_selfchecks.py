"""Merge self-check results of one GPU model, commit and versions into one file.

    python3 tools/device/merge_selfchecks.py OUT.json PART.json [PART.json ...]

Each PART is a ``python -m gpuperf.selfcheck --out PART`` run over some of the notebooks (on
another GPU of the same machine, or another copy). OUT, where it exists, is merged too, as
``--append`` would: a row of a PART replaces OUT's row for the same notebook and copy. Refuses
parts that differ in the GPU, commit, versions, budget, mode or measuring, so that one table
never mixes two runs' conditions. Prints one line per notebook and exits 1 unless all passed.

OUT may come from an older commit, the rest being the same: then each of its rows that no PART
replaces keeps its own commit, and only if nothing it depends on changed between that commit
and the parts' (its chapter's notebooks, the kernels, the checkers:
``gpuperf.selfcheck.stale_inputs``); otherwise the merge is refused and names the chapters to
run again. So a change to one chapter needs a self-check of that chapter only.

A PART with a ``.tree`` file beside it (``part.json`` and ``part.tree``, from tree_hash.py on
the device) is checked against the commit it names: the device runs the working tree it was
sent, whatever commit the caller exported, and a self-check of one tree must never be recorded
under another commit. A PART without one is merged with a warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from gpuperf.selfcheck import changed_files, notebook_inputs, row_commit, stale_inputs  # noqa: E402

SAME = ("gpu", "commit", "versions", "budget_s", "mode", "measure", "simulated")


def _check_tree(part: Path, commit: str | None) -> None:
    """Refuse ``part`` if the notebooks and kernels it ran are not those of ``commit``."""
    tree = part.with_suffix(".tree")
    if not tree.is_file():
        print(f"merge_selfchecks: warning: no {tree.name} beside {part}: cannot confirm it ran "
              f"commit {commit}'s notebooks and kernels", file=sys.stderr)
        return
    sys.path.insert(0, str(Path(__file__).parent))
    from tree_hash import at_commit

    ran = dict(reversed(line.split(" ", 1)) for line in tree.read_text().splitlines() if line)
    named = dict(reversed(line.split(" ", 1)) for line in at_commit(str(commit)))
    differ = sorted(p for p in set(ran) | set(named) if ran.get(p) != named.get(p))
    if differ:
        raise SystemExit(f"merge_selfchecks: {part} ran notebooks or kernels that are not commit "
                         f"{commit}'s ({len(differ)} files differ, e.g. {', '.join(differ[:3])}): "
                         "check out that commit before the device calls, or record the run "
                         "under the commit it ran")


def _same(docs: list[dict], keys, what: str) -> None:
    for key in keys:
        if len({json.dumps(d.get(key), sort_keys=True) for d in docs}) != 1:
            raise SystemExit(f"merge_selfchecks: {what} differ in {key!r}; rerun them on one "
                             "machine at one commit (or remove the file they are merged into)")


def _kept_rows(old: dict, replaced: set, commit: str, root: Path) -> list[dict]:
    """OUT's rows that no part replaces, each with its commit, if still valid at ``commit``."""
    kept, stale = [], {}
    changed: dict = {}
    for r in old["notebooks"]:
        if (r["notebook"], r["copy"]) in replaced:
            continue
        since = row_commit(old, r)
        if since is None:
            stale[r["notebook"]] = ["(the row names no commit)"]
        elif since != commit:
            if since not in changed:
                try:
                    changed[since] = changed_files(since, commit, root=root)
                except (OSError, subprocess.CalledProcessError):
                    raise SystemExit(f"merge_selfchecks: git cannot compare {since} (the commit "
                                     f"of {r['notebook']}'s row) with {commit}: run in the "
                                     "repository, with both commits fetched") from None
            try:
                inputs = notebook_inputs(r["notebook"], root)
            except ValueError:  # no such chapter or package at root: every source file counts
                inputs = [f for f in changed[since] if f.startswith("src/")]
            files = stale_inputs(r["notebook"], changed[since], inputs=inputs)
            if files:
                stale[r["notebook"]] = files
        kept.append({**r, "commit": since})
    if stale:
        names = ", ".join(sorted(stale))
        example = next(iter(stale.values()))[:3]
        raise SystemExit(f"merge_selfchecks: the rows of {names} ran at an older commit, and "
                         f"what they depend on changed since (e.g. {', '.join(example)}): run "
                         f"those notebooks at {commit} too, in a part of this merge")
    return kept


def merge(out: Path, parts: list[Path], root: Path = ROOT) -> dict:
    docs = [json.loads(p.read_text()) for p in parts]
    _same(docs, SAME, "the parts")
    for part, doc in zip(parts, docs):
        _check_tree(part, doc.get("commit"))
    commit = docs[0].get("commit")
    rows = {}
    for d in docs:  # the parts in order: later ones win
        for r in d["notebooks"]:
            rows[(r["notebook"], r["copy"])] = {**r, "commit": commit}
    if out.exists():
        old = json.loads(out.read_text())
        _same([docs[0], old], [k for k in SAME if k != "commit"], f"{out} and the parts")
        for r in _kept_rows(old, set(rows), commit, root):
            rows[(r["notebook"], r["copy"])] = r
    doc = dict(docs[0])
    doc["notebooks"] = sorted(rows.values(), key=lambda r: (r["copy"] != "chapter", r["notebook"]))
    doc["passed"] = bool(rows) and all(r.get("ok") for r in rows.values())
    return doc


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out, parts = Path(argv[0]), [Path(p) for p in argv[1:]]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        print(f"merge_selfchecks: no such result file: {', '.join(missing)}", file=sys.stderr)
        return 2
    doc = merge(out, parts)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    for r in doc["notebooks"]:
        print(f"  {r['notebook']:24s} {r['copy']:8s} {r.get('seconds', 0):6.1f} s  "
              f"{'ok' if r.get('ok') else 'FAILED'}  {r.get('commit')}")
    print(f"merge_selfchecks: {len(doc['notebooks'])} rows in {out}; "
          f"{'passed' if doc['passed'] else 'NOT passed'}")
    return 0 if doc["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
