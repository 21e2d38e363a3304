"""A book without solutions (GPUPERF_BOOK_SOLUTIONS=hide), built by Jupyter Book itself on a
one-page book that uses the course's Sphinx extension and a gated solution like the chapters'."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

SECRET = "3 * 4 * n / (ms * 1e-3) / 1e9"


def _book(folder: Path) -> Path:
    (folder / "notebooks").mkdir(parents=True)
    shutil.copytree(ROOT / "book" / "_ext", folder / "book" / "_ext")
    (folder / "_config.yml").write_text(
        "title: t\nexecute:\n  execute_notebooks: 'off'\n"
        "parse:\n  myst_enable_extensions: [colon_fence]\n"
        "sphinx:\n  extra_extensions: [sphinx_exercise]\n"
        "  local_extensions:\n    gpuperf_book: book/_ext\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: notebooks/ch\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter\n\nSome prose.", id="title"),
        nbformat.v4.new_markdown_cell(
            ":::{exercise} Bandwidth\n:label: ex-bw\n\nWrite `saxpy_gbps(n, ms)`.\n:::",
            id="task"),
        nbformat.v4.new_markdown_cell(":::{solution-start} ex-bw\n:class: dropdown\n:::",
                                      id="open"),
        nbformat.v4.new_code_cell("def saxpy_gbps(n, ms):\n    ### BEGIN SOLUTION\n    return "
                                  + SECRET + "\n    ### END SOLUTION", id="solution"),
        nbformat.v4.new_markdown_cell("Why: three arrays.\n:::{solution-end}\n:::", id="close"),
        nbformat.v4.new_markdown_cell("After the exercise.", id="after"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, folder / "notebooks" / "ch.ipynb")
    return folder


def _build(folder: Path, **env):
    exe = Path(sys.executable).parent / "jupyter-book"
    if not exe.exists():
        pytest.skip("jupyter-book is not installed (python -m pip install -r requirements.txt)")
    run = subprocess.run([str(exe), "build", str(folder), "-W", "-n"], capture_output=True,
                         text=True, timeout=600, env={**os.environ, **env})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    html = (folder / "_build" / "html" / "notebooks" / "ch.html").read_text()
    download = (folder / "_build" / "html" / "_sources" / "notebooks" / "ch.ipynb").read_text()
    return html, download


def test_a_book_without_solutions(tmp_path):
    html, download = _build(_book(tmp_path / "hidden"), GPUPERF_BOOK_SOLUTIONS="hide")
    assert "Write <code" in html and "After the exercise" in html  # the task and what follows
    assert "Why: three arrays" not in html and "saxpy_gbps(n, ms):" not in html
    assert "3 * 4 * n" not in download and "raise NotImplementedError()" in download
    assert "Why: three arrays" not in download


def test_the_default_book_shows_solutions(tmp_path):
    html, download = _build(_book(tmp_path / "shown"))
    assert "Why: three arrays" in html and "solution" in html.lower()
    assert "BEGIN SOLUTION" in download


def test_a_misspelt_setting_is_refused(tmp_path):
    exe = Path(sys.executable).parent / "jupyter-book"
    if not exe.exists():
        pytest.skip("jupyter-book is not installed")
    run = subprocess.run([str(exe), "build", str(_book(tmp_path / "bad"))], capture_output=True,
                         text=True, timeout=600,
                         env={**os.environ, "GPUPERF_BOOK_SOLUTIONS": "hidden"})
    assert run.returncode != 0 and "GPUPERF_BOOK_SOLUTIONS='hidden'" in run.stdout + run.stderr
