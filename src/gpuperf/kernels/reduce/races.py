"""v4's race, seen in the course's thread emulator: each tree rung's shared-memory races."""

from __future__ import annotations

import numpy as np

from gpuperf import exercises as ex
from gpuperf import validate

from .host import _ceil_div, kernel_for
from .kernels import _check_block

RACE_VERSIONS = ("v4", "v4.1", "v4.2")
_EMULATED_TREES = ("v0", "v1", "v1.5", "v2", "v3", "v4", "v4.1", "v4.2", "v5", "v6", "v7")


def emulate_races(versions=RACE_VERSIONS, *, block: int = 64, n: int = 256) -> list[dict]:
    """Run each rung's kernel in the course's thread emulator and report its shared-memory races.

    The emulator (``gpuperf.emulator``) runs every thread of a block as its own thread of
    control, as independent thread scheduling allows, and records every shared-memory access
    with the barrier interval it falls in. Two threads touching one element between the same
    two barriers, one of them writing, is a race, whatever the hardware happens to do. It
    needs no GPU and no simulator, so it gives the same answer everywhere. One row per
    rung: ``version``, ``races`` (distinct racing pairs of lines), ``example`` (the first,
    in words), and the emulated ``result`` against the float64 ``reference``.
    """
    from gpuperf import emulator

    versions = validate.sequence(versions, "versions")
    for i, version in enumerate(versions):
        validate.choice(version, f"versions[{i}]", _EMULATED_TREES)
    block = _check_block("v4", block)
    n = validate.positive_int(n, "n", maximum=4096)
    x = ex.random_array(n, 3)
    reference = float(np.sum(x, dtype=np.float64))
    rows = []
    for version in versions:
        if version not in _EMULATED_TREES:
            raise ValueError(f"versions: {version!r} cannot be emulated here (no shared-memory "
                             "tree, or v8's 16-byte loads); pick from "
                             f"{', '.join(_EMULATED_TREES)}.")
        kernel = kernel_for(version, block)
        per_block = block if version in ("v0", "v1", "v1.5", "v2", "v6", "v7") else 2 * block
        grid = _ceil_div(n, per_block)
        partial = np.zeros(grid, dtype=np.float32)
        args = (x, partial, n, 1) if version in ("v6", "v7") else (x, partial, n)
        run = emulator.launch(kernel, grid, block, *args)
        races = run.races()
        result = float(np.sum(partial, dtype=np.float64))
        rows.append({"version": version, "block": block, "n": n, "races": len(races),
                     "example": (run.describe_races(1) or [None])[0], "result": result,
                     "reference": reference,
                     "rel_error": abs(result - reference) / abs(reference)})
    return rows


def show_races(rows) -> None:
    """Print :func:`emulate_races` rows: each rung's races and the sum it got in the emulator."""
    rows = validate.sequence(rows, "rows")
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not {"version", "races", "result", "reference"} <= set(r):
            raise TypeError(f"rows[{i}] must be a row from red.emulate_races(), not {r!r:.80}.")
    for r in rows:
        verdict = (f"{r['races']} racing pair(s) of lines" if r["races"] else "no race")
        print(f"{r['version']}: {verdict}, sum {r['result']:.4f} "
              f"(float64 {r['reference']:.4f}, relative error {r['rel_error']:.1e})")
    for r in rows:
        if r.get("example"):
            print(f"\n{r['version']}, first race: {r['example']}")
