"""Notebook helpers the class tools share (``assign``, ``grade``, ``selfcheck``): what a
notebook argument must be, which cells call a checker, the file mode of what they write, and the
Jupyter client they run notebooks with. The bottom of the classroom layer: it imports none of
them.
"""

from __future__ import annotations

import ast
import re
import time

from .vetting import parse_python

# A cell that shows a checker rejecting a wrong kernel on purpose (the exercise's "before").
EXPECT_REJECT = "expect-reject"
POLL_SLICE_S = 1.0


def notebook_arg(nb):
    """``nb`` must be a notebook object; TypeError otherwise."""
    if not hasattr(nb, "cells") or not isinstance(getattr(nb, "cells", None), list):
        raise TypeError(f"nb must be a notebook object (nbformat.read(path, as_version=4)), not "
                        f"{type(nb).__name__}.")


def checker_name(source: str) -> str | None:
    """The first ``check_*`` function a code cell calls (by the AST, not by substring)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a code cell's text (a string), not {type(source).__name__}.")
    try:
        tree = parse_python(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name.startswith("check_"):
                return name
    return None


def _calls_a_checker(source: str) -> bool:
    return checker_name(source) is not None


def checker_cells(nb) -> list[tuple[str, str]]:
    """``(cell id, source)`` of each checker cell of a source notebook, in order (not the
    cells tagged ``expect-reject``, which show a checker rejecting a wrong kernel on purpose)."""
    notebook_arg(nb)
    out = []
    for cell in nb.cells:
        if EXPECT_REJECT in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "code" and _calls_a_checker(cell.source):
            if not cell.get("id"):
                raise ValueError("a checker cell of the source notebook has no cell id "
                                 "(nbformat 4.5 or later is needed to match it).")
            out.append((cell.id, cell.source))
    return out


def default_file_mode(base: int = 0o666) -> int:
    """The permissions a new file (``base`` 0o666) or folder (0o777) gets under the current
    umask (0o644 or 0o755 under umask 022)."""
    import os

    if isinstance(base, bool) or not isinstance(base, int) or not 0 <= base <= 0o7777:
        raise ValueError(f"base={base!r} is not a permission mode; pass 0o666 (a file) or 0o777 "
                         "(a folder).")
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def _sliced(channel) -> None:
    """Make ``channel.get_msg(timeout)`` wait in slices of ``POLL_SLICE_S``, looking again
    after each, until the message comes or ``timeout`` passes.

    nbclient waits for a cell's reply with one long poll of the shell socket. With widget
    cells that poll sometimes misses the wake-up although the reply has arrived, and the
    cell then seems to take the whole cell timeout (the reply is read when the poll gives
    up; jupyter/nbclient#312). A run of the course on an H100 lost 120 s that way in one
    explorer cell that takes 0.1 s; polling again each second finds the reply at once.
    """
    import asyncio
    from queue import Empty

    get_msg = channel.get_msg

    async def get_msg_sliced(timeout=None, **kwargs):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            step = POLL_SLICE_S if left is None else min(POLL_SLICE_S, left)
            try:
                got = get_msg(timeout=step, **kwargs)
                return await got if asyncio.iscoroutine(got) else got
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg_sliced


def client_class():
    from nbclient import NotebookClient

    class SlicedPollClient(NotebookClient):
        """nbclient's client, with its shell and IOPub waits polled in slices (``_sliced``)."""

        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            _sliced(kc.shell_channel)
            _sliced(kc.iopub_channel)
            return kc

    return SlicedPollClient


# --- the main path's length -------------------------------------------------------------------

MAIN_PATH_WORDS = 2500  # most words of prose a chapter notebook shows outside folded blocks

_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(\{([\w-]+)\})?(.*)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def _unfolded_lines(source: str) -> list[str]:
    """The lines of a Markdown cell a reader sees without opening anything: the cell minus
    folded directives (``{dropdown}``, or any directive with ``:class: dropdown``), code
    blocks and display math."""
    lines = source.splitlines()
    kept, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m:
            fence, directive = m.group(1), m.group(3)
            end = i + 1
            while end < len(lines) and lines[end].strip() != fence:
                end += 1
            body = lines[i + 1:end]
            options = [ln for ln in body if ln.strip().startswith(":") and not
                       ln.strip().startswith(fence[0] * 3)]
            folded = directive == "dropdown" or any(
                ln.strip().startswith(":class:") and "dropdown" in ln for ln in options)
            if directive and not folded and directive not in ("code", "code-block", "math"):
                kept += [m.group(4)] + [ln for ln in body if ln not in options]
            i = end + 1
            continue
        kept.append(lines[i])
        i += 1
    text = "\n".join(kept)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    return text.splitlines()


def main_path_words(nb) -> int:
    """Words of prose outside folded blocks in a notebook (a path or a loaded notebook): the
    length of the chapter's main path. Code cells, code blocks and display math do not count."""
    import os

    import nbformat

    if not hasattr(nb, "cells"):
        if not isinstance(nb, (str, os.PathLike)) or not os.path.isfile(nb):
            raise TypeError(f"nb must be a notebook object or the path of a notebook file, not "
                            f"{nb!r}; e.g. main_path_words('solutions/01_measuring.ipynb').")
        nb = nbformat.read(str(nb), as_version=4)
    words = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown" or "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue
        for line in _unfolded_lines(cell.source):
            words += len(_WORD.findall(line))
    return words
