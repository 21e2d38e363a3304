"""Chapter 4's figures: which threads form a warp, what a warp touches under each naive
mapping (traced in the emulator), the tiling diagram and the roofline of ``matmul_roofline``."""

from __future__ import annotations

import numpy as np

from gpuperf import exercises as ex
from gpuperf import validate

from .kernels import _cdiv, naive_col_x, naive_row_x


def warp_threads(block=(16, 16), warp: int = 0) -> list[tuple[int, int]]:
    """The ``(threadIdx.x, threadIdx.y)`` of the 32 threads of warp ``warp`` of a 2-D block:
    a block's threads are numbered ``tid = x + y * blockDim.x`` and each run of 32 consecutive
    ``tid`` is a warp, so a block 16 wide puts two rows of 16 in each warp."""
    bx, by = (validate.positive_int(b, f"block[{i}]", maximum=1024)
              for i, b in enumerate(validate.sequence(block, "block")))
    if bx * by > 1024:
        raise ValueError(f"block={tuple(block)} has {bx * by} threads; a block has at most 1024.")
    warp = validate.positive_int(warp, "warp", minimum=0, maximum=max(0, (bx * by - 1) // 32))
    return [(t % bx, t // bx) for t in range(32 * warp, min(32 * warp + 32, bx * by))]


def warp_sectors(block=(16, 16), n: int = 32) -> list[dict]:
    """Sectors per warp request of each naive mapping, traced in the course's emulator on
    ``n`` x ``n`` matrices with blocks of ``block``: one row per kernel, array and kind
    (loads of A and B, stores of C). The emulator runs the kernels' Python source, so this
    is the same with or without a GPU."""
    from gpuperf.kernels import coalescing

    bx, by = (validate.positive_int(b, f"block[{i}]", maximum=1024)
              for i, b in enumerate(validate.sequence(block, "block")))
    n = validate.positive_int(n, "n", minimum=1, maximum=64)
    rows = []
    for kernel in (naive_row_x, naive_col_x):
        A, B = ex.random_array((n, n), 1), ex.random_array((n, n), 2)
        C = np.zeros((n, n), np.float32)
        # naive_row_x: x runs down the rows; naive_col_x: x runs along the columns
        grid = (_cdiv(n, bx), _cdiv(n, by))
        tr = coalescing.trace(kernel, grid, (bx, by), A, B, C)
        for array, kind in (("A", "load"), ("B", "load"), ("C", "store")):
            rows.append({"kernel": kernel.py_func.__name__, "array": array, "kind": kind,
                         "sectors_per_request": tr.sectors_per_request(kind=kind, array=array)})
    return rows


def show_warp_sectors(block=(16, 16), n: int = 32) -> list[dict]:
    """Print which threads form a warp of ``block`` and :func:`warp_sectors`; return the rows."""
    threads = warp_threads(block)
    rows = warp_sectors(block, n)  # checks its arguments before anything is printed
    xs, ys = sorted({t[0] for t in threads}), sorted({t[1] for t in threads})
    print(f"warp 0 of a {block[0]} x {block[1]} block: threadIdx.x {xs[0]}..{xs[-1]}, "
          f"threadIdx.y {ys[0]}..{ys[-1]} ({len(xs)} x {len(ys)} threads)")
    words = {"naive_row_x": "naive (row from x)", "naive_col_x": "naive (col from x)"}  # as the page
    per_k = {}
    for r in rows:
        print(f"{words[r['kernel']]}: {r['kind']} of {r['array']}: {r['sectors_per_request']:.1f} "
              f"sectors per warp request")
        if r["kind"] == "load":
            per_k[r["kernel"]] = per_k.get(r["kernel"], 0.0) + r["sectors_per_request"]
    print("sectors per warp for one k (A and B): " + ", ".join(f"{words[k]} {v:.1f}"
                                                               for k, v in per_k.items())
          + f"; ratio {per_k['naive_row_x'] / per_k['naive_col_x']:.1f} to 1")
    return rows


def draw_mappings(n: int = 8):
    """Which elements of A, B and C one warp touches under each naive mapping."""
    validate.positive_int(n, "n", minimum=2, maximum=32)
    import matplotlib.pyplot as plt

    from gpuperf import plots

    fig, axes = plt.subplots(2, 3, figsize=(plots.COLUMN_INCHES, 5.2))
    for r, (title, along_col) in enumerate((("row from threadIdx.x (uncoalesced)", True),
                                            ("col from threadIdx.x (coalesced)", False))):
        for c, (name, shape) in enumerate((("A", (n, n)), ("B", (n, n)), ("C", (n, n)))):
            ax = axes[r, c]
            grid = np.zeros(shape)
            if along_col:  # the warp's threads span rows
                if name == "A":
                    grid[:, 2] = 1
                elif name == "B":
                    grid[2, 3] = 1
                else:
                    grid[:, 3] = 1
            else:
                if name == "A":
                    grid[3, 2] = 1
                elif name == "B":
                    grid[2, :] = 1
                else:
                    grid[3, :] = 1
            ax.imshow(grid, cmap="Blues", vmin=0, vmax=1.3)
            ax.set_xticks(np.arange(-0.5, n), [])
            ax.set_yticks(np.arange(-0.5, n), [])
            ax.grid(color="0.7", lw=0.5)
            ax.tick_params(length=0)
            if r == 0:
                ax.set_title(name, fontsize=10)
            if c == 0:
                ax.set_ylabel(title.replace(" (", "\n("), fontsize=8)
    fig.suptitle("One step k of one warp: shaded elements are what its threads touch\n"
                 "(row-major: a row is contiguous)", fontsize=10)
    fig.tight_layout()
    return fig


def draw_tiling(n: int = 8, tile: int = 2, step: int = 1):
    """Tiled matmul: the C tile a block owns, and the A and B tiles it loads at ``step``."""
    n = validate.positive_int(n, "n", minimum=2, maximum=32)
    tile = validate.positive_int(tile, "tile", maximum=n)
    if n % tile:
        raise ValueError(f"tile={tile} must divide n={n}; e.g. tile=2 with n=8.")
    validate.positive_int(step, "step", minimum=0, maximum=n // tile - 1)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from gpuperf import plots

    fig, axes = plt.subplots(1, 3, figsize=(plots.COLUMN_INCHES, 2.9))
    bi, bj = 1, 2  # the block's tile row and column in C
    specs = (("A (M x K)", (bi, step)), ("B (K x N)", (step, bj)), ("C (M x N)", (bi, bj)))
    for ax, (name, (ti, tj)) in zip(axes, specs):
        ax.set_xlim(0, n)
        ax.set_ylim(n, 0)
        ax.set_aspect("equal")
        for k in range(0, n + 1, tile):
            ax.axhline(k, color="0.85", lw=0.6)
            ax.axvline(k, color="0.85", lw=0.6)
        if name.startswith("A"):
            ax.add_patch(Rectangle((0, bi * tile), n, tile, color="C0", alpha=0.15))
        if name.startswith("B"):
            ax.add_patch(Rectangle((bj * tile, 0), tile, n, color="C0", alpha=0.15))
        ax.add_patch(Rectangle((tj * tile, ti * tile), tile, tile, color="C1" if name[0] != "C"
                               else "C2", alpha=0.8))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(name, fontsize=10)
    fig.suptitle(f"Step {step}: the block loads one {tile}x{tile} tile of A and one of B into "
                 f"shared memory;\neach loaded element is used by {tile} threads, once each", fontsize=9)
    fig.tight_layout()
    return fig


def plot_roofline(roof, *, title: str = "Roofline", peak_tflops: float | None = None):
    """The ``matmul_roofline`` result on the roofline of its GPU (the copy bandwidth and
    cuBLAS's FP32 rate measured in the same run); beside a live run, the recorded GPUs'
    kernels as open markers. ``peak_tflops``: the GPU's theoretical FP32 peak
    (``gp.device.fp32_peak_tflops``); given, it is the compute roof and cuBLAS's measured rate
    is drawn as a dashed reference below it."""
    validate.result(roof, "roof")
    for _c in ("version", "ai", "tflops"):
        validate.column(roof, _c, "roof column")
    validate.string(title, "title")
    if peak_tflops is not None:
        validate.positive(peak_tflops, "peak_tflops")
    from gpuperf import plots

    def points(res):
        return [{"name": r["version"], "intensity": r["ai"], "tflops": r["tflops"]}
                for r in res.rows if r.get("ai") and r.get("tflops")]

    c = roof.ceilings
    if not (c.get("copy_gbps") and c.get("matmul_tflops")):
        raise ValueError(f"roof ({roof.name} on {roof.gpu}) has no copy_gbps and matmul_tflops "
                         "ceilings; pass the result of gp.records.run('matmul_roofline').")
    others = {plots.gpu_label(res): points(res) for res in plots.live_references(roof)}
    if peak_tflops is None:
        return plots.roofline(points(roof), bw_gbps=c["copy_gbps"], peak_tflops=c["matmul_tflops"],
                              label=roof.label, title=title, references=others)
    return plots.roofline(points(roof), bw_gbps=c["copy_gbps"], peak_tflops=peak_tflops,
                          label=roof.label, title=title, references=others,
                          more_roofs=[(f"cuBLAS FP32 at {c.get('matmul_n', 4096)}³, measured",
                                       c["matmul_tflops"], "TFLOP/s")])
