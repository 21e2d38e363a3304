"""The chapter pages and their solutions, built by Jupyter Book itself on a one-page book that
uses the course's Sphinx extension and a gated solution like the chapters': the page is the
student copy `notebooks/ch.ipynb` (what its download and Colab buttons hand out) with its
content read from `solutions/ch.ipynb`; GPUPERF_BOOK_SOLUTIONS=hide leaves the solutions out."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from gpuperf import assign

SECRET = "3 * 4 * n / (ms * 1e-3) / 1e9"
LINK = "https://example.com/scan.php?page=news_item&px=JEDEC-HBM3"  # two query parameters


def _book(folder: Path) -> Path:
    for sub in ("notebooks", "solutions"):
        (folder / sub).mkdir(parents=True)
    shutil.copytree(ROOT / "book" / "_ext", folder / "book" / "_ext")
    (folder / "_config.yml").write_text(
        "title: t\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: 'off'\n"
        "parse:\n  myst_enable_extensions: [colon_fence]\n"
        "sphinx:\n  extra_extensions: [sphinx_exercise]\n"
        "  local_extensions:\n    gpuperf_book: book/_ext\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: notebooks/ch\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter\n\nSome prose, [a link](" + LINK + ").",
                                      id="title"),
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
    nbformat.write(nb, folder / "solutions" / "ch.ipynb")
    nbformat.write(assign.student_copy(nb), folder / "notebooks" / "ch.ipynb")
    return folder


def _run_build(folder: Path, **env):
    exe = Path(sys.executable).parent / "jupyter-book"
    if not exe.exists():
        pytest.skip("jupyter-book is not installed (python -m pip install -r requirements.txt)")
    return subprocess.run([str(exe), "build", str(folder), "-W", "-n"], capture_output=True,
                          text=True, timeout=600, env={**os.environ, **env})


def _build(folder: Path, **env):
    run = _run_build(folder, **env)
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


def test_the_default_book_shows_solutions_and_hands_out_the_student_copy(tmp_path):
    html, download = _build(_book(tmp_path / "shown"))
    assert "Why: three arrays" in html and "BEGIN SOLUTION" in html
    assert "3 * 4 * n" not in download and "raise NotImplementedError()" in download
    assert "Why: three arrays" not in download
    # A link's "&" is escaped once in the page, as HTML wants, not twice (MyST-Parser#760).
    assert 'href="' + LINK.replace("&", "&amp;") + '"' in html, html[html.find("a link") - 300:]


def test_a_stale_student_copy_fails_the_build(tmp_path):
    folder = _book(tmp_path / "stale")
    chapter = folder / "solutions" / "ch.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    nb.cells[-1].source = "After the exercise, edited."
    nbformat.write(nb, chapter)  # the chapter changed; notebooks/ch.ipynb was not written again
    run = _run_build(folder)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "is not its student copy" in out
    assert "gpuperf.assign solutions/ --out notebooks/ --force" in out


def test_a_misspelt_setting_is_refused(tmp_path):
    exe = Path(sys.executable).parent / "jupyter-book"
    if not exe.exists():
        pytest.skip("jupyter-book is not installed")
    run = subprocess.run([str(exe), "build", str(_book(tmp_path / "bad"))], capture_output=True,
                         text=True, timeout=600,
                         env={**os.environ, "GPUPERF_BOOK_SOLUTIONS": "hidden"})
    assert run.returncode != 0 and "GPUPERF_BOOK_SOLUTIONS='hidden'" in run.stdout + run.stderr
