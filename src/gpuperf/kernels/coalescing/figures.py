"""Figures of the sector model: ``draw_warp_access`` draws one warp's access,
``draw_warp_access_gallery`` the cases the chapter discusses, ``draw_stride_efficiency`` the
efficiency against stride, and ``explore_warp_access()`` is the interactive version
(ipywidgets, imported lazily)."""

from __future__ import annotations

import numpy as np

from gpuperf import validate

from .models import LINE_BYTES, SECTOR_BYTES, WarpAccess, stride_efficiency, warp_access

_USED, _MOVED, _IDLE = "#1f5fa8", "#a9c8ec", "#f4f4f4"


def percent(fraction: float) -> str:
    """A share in percent with one decimal where it has one: 12.5%, not 12% (one byte in
    eight); 80%, not 80.0%."""
    fraction = validate.number(fraction, "fraction")
    return f"{100 * fraction:.1f}".removesuffix(".0") + "%"


def draw_warp_access(access: WarpAccess | None = None, *, stride: int = 1, offset: int = 0,
                     elem_bytes: int = 4, ax=None, max_lines: int = 8, title: bool = True):
    """Draw the 128-byte lines one warp touches: sectors moved (light), bytes used (dark).

    Pass a ``WarpAccess`` (from ``warp_access`` or a trace) or the three parameters.
    Each row is one touched line; lane numbers sit on the bytes each lane reads.
    Returns the matplotlib Figure.
    """
    if access is not None and not isinstance(access, WarpAccess):
        raise TypeError(f"access must be a WarpAccess (from warp_access(...)) or None, not "
                        f"{type(access).__name__}.")
    if access is None:
        warp_access(stride, offset, elem_bytes)  # checks the three parameters
    validate.positive_int(max_lines, "max_lines", maximum=64)
    validate.boolean(title, "title")
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}.")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from gpuperf import plots

    acc = access if access is not None else warp_access(stride, offset, elem_bytes)
    lines = acc.lines
    shown = lines[:max_lines]
    if ax is None:
        fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 0.45 * len(shown) + 1.3))
    else:
        fig = ax.figure
    sectors = set(acc.sectors)
    lanes_at: dict[int, list[tuple[int, int]]] = {}
    for lane, a in enumerate(acc.addresses):
        lanes_at.setdefault(a // LINE_BYTES, []).append((lane, a))
    for row, line in enumerate(shown):
        y = len(shown) - 1 - row
        base = line * LINE_BYTES
        for s in range(LINE_BYTES // SECTOR_BYTES):
            sector = base // SECTOR_BYTES + s
            ax.add_patch(Rectangle((s * SECTOR_BYTES, y), SECTOR_BYTES, 0.8,
                                   facecolor=_MOVED if sector in sectors else _IDLE,
                                   edgecolor="#333333", linewidth=1.0))
        for lane, a in lanes_at.get(line, []):
            x0 = a - base
            width = min(acc.elem_bytes, LINE_BYTES - x0)
            ax.add_patch(Rectangle((x0, y + 0.1), width, 0.6, facecolor=_USED,
                                   edgecolor="white", linewidth=0.4))
            if width >= 4:
                ax.text(x0 + width / 2, y + 0.4, str(lane), ha="center", va="center",
                        fontsize=5.5 if width < 8 else 7, color="white")
        ax.text(-2, y + 0.4, f"line @ {base:#06x}", ha="right", va="center", fontsize=8)
    if len(lines) > len(shown):
        ax.text(LINE_BYTES / 2, -0.45, f"... and {len(lines) - len(shown)} more lines like these",
                ha="center", va="center", fontsize=8, style="italic")
    ax.set_xlim(-34, LINE_BYTES + 1)
    ax.set_ylim(-0.8 if len(lines) > len(shown) else -0.2, len(shown))
    ax.set_xticks([0, 32, 64, 96, 128])
    ax.set_xlabel("byte within the 128-byte line (boxes: 32-byte sectors)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if title:
        head = acc.description or "one warp's access"
        # the summary's share with its decimal: stride 8 is 12.5% efficient, not 12%
        ax.set_title(f"{head}\n{acc.summary().rsplit(': ', 1)[0]}: "
                     f"{percent(acc.efficiency)} efficient", fontsize=9)
    return fig


GALLERY_CASES = (
    dict(stride=1, offset=0, elem_bytes=4),
    dict(stride=1, offset=1, elem_bytes=4),
    dict(stride=2, offset=0, elem_bytes=4),
    dict(stride=8, offset=0, elem_bytes=4),
    dict(stride=1, offset=0, elem_bytes=8),
    dict(stride=1, offset=0, elem_bytes=16),
)


def draw_warp_access_gallery(cases=GALLERY_CASES):
    """The static figure for the book: several strides, offsets and element sizes."""
    for _i, _c in enumerate(validate.sequence(cases, "cases")):
        validate.mapping(_c, f"cases[{_i}]")
        for _k in _c:
            validate.choice(_k, f"cases[{_i}] key", ("stride", "offset", "elem_bytes", "lanes"))
    import matplotlib.pyplot as plt

    from gpuperf import plots

    accesses = [warp_access(**c) for c in cases]
    rows = [min(len(a.lines), 4) + (len(a.lines) > 4) for a in accesses]
    fig, axes = plt.subplots(len(cases), 1, figsize=(plots.COLUMN_INCHES, 0.5 * sum(rows) + 1.0 * len(cases)),
                             gridspec_kw={"height_ratios": [r + 1.2 for r in rows]})
    for ax, acc in zip(np.atleast_1d(axes), accesses):
        draw_warp_access(acc, ax=ax, max_lines=4)
    fig.tight_layout()
    return fig


def draw_stride_efficiency(max_stride: int = 32, elem_sizes=(4, 8)):
    """The model's efficiency against stride, for each element size (a line plot)."""
    validate.positive_int(max_stride, "max_stride", maximum=4096)
    for _i, _e in enumerate(validate.sequence(elem_sizes, "elem_sizes")):
        validate.choice(_e, f"elem_sizes[{_i}]", (1, 2, 4, 8, 16))
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    strides = list(range(1, max_stride + 1))
    for eb in elem_sizes:
        ax.plot(strides, [100 * stride_efficiency(s, eb) for s in strides], marker="o",
                markersize=3, label=f"{eb}-byte elements")
    ax.set_xlabel("stride (elements)")
    ax.set_ylabel("bytes used / bytes moved (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("The sector model: efficiency of one warp's load against stride", fontsize=10)
    fig.tight_layout()
    return fig


def explore_warp_access():
    """Sliders for stride, offset and element size over the warp-access figure.

    Uses ``gpuperf.widgets`` (ipywidgets), imported only when called.
    """
    from gpuperf import widgets

    def show(stride, offset, elem_bytes):
        draw_warp_access(stride=stride, offset=offset, elem_bytes=elem_bytes)

    return widgets.interact(show, start={"elem_bytes": 4}, stride=(1, 33, 1), offset=(0, 32, 1),
                            elem_bytes=[1, 2, 4, 8, 16])
