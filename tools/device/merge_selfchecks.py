"""Merge self-check results of one GPU model, commit and versions into one file.

    python3 tools/device/merge_selfchecks.py OUT.json PART.json [PART.json ...]

Each PART is a ``python -m gpuperf.selfcheck --out PART`` run over some of the notebooks (on
another GPU of the same machine, or another copy). OUT, where it exists, is merged too, as
``--append`` would: a row of a PART replaces OUT's row for the same notebook and copy. Refuses
parts that differ in the GPU, commit, versions, budget, mode or measuring, so that one table
never mixes two runs' conditions. Prints one line per notebook and exits 1 unless all passed.

A PART with a ``.tree`` file beside it (``part.json`` and ``part.tree``, from tree_hash.py on
the device) is checked against the commit it names: the device runs the working tree it was
sent, whatever commit the caller exported, and a self-check of one tree must never be recorded
under another commit. A PART without one is merged with a warning.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

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


def merge(out: Path, parts: list[Path]) -> dict:
    docs = [json.loads(p.read_text()) for p in parts]
    if out.exists():
        docs.append(json.loads(out.read_text()))  # last: the parts' rows replace its rows
    for key in SAME:
        if len({json.dumps(d.get(key), sort_keys=True) for d in docs}) != 1:
            raise SystemExit(f"merge_selfchecks: the runs differ in {key!r}; rerun them on one "
                             f"machine at one commit, or remove {out}")
    for part, doc in zip(parts, docs):
        _check_tree(part, doc.get("commit"))
    rows = {}
    for d in reversed(docs):  # OUT first, then the parts in order: later ones win
        for r in d["notebooks"]:
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
              f"{'ok' if r.get('ok') else 'FAILED'}")
    print(f"merge_selfchecks: {len(doc['notebooks'])} rows in {out}; "
          f"{'passed' if doc['passed'] else 'NOT passed'}")
    return 0 if doc["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
