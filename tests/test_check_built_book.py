"""The built-book check finds what it promises: a tiny site with one fault of each kind the
reader's standard names (a printed text table, a display equation wider than the column, a table
header broken inside a word) fails it, and the same page without them passes."""

import importlib.util
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("check_built_book", HERE / "check_built_book.py")
cbb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cbb)

CHROMIUM = os.environ.get("GPUPERF_CHROMIUM", "/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() or importlib.util.find_spec("playwright") is None,
    reason="needs Chromium and playwright (requirements-dev.txt; Debian's chromium package)")

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
article {{ width: 676px; font: 16px sans-serif; }}
table {{ border-collapse: collapse; }} th {{ overflow-wrap: {wrap}; }}
.wide {{ display: block; width: {eq}px; }}
</style></head><body><article class="bd-article">
<p>prose</p>
<div class="cell_output"><pre>{printed}</pre></div>
<mjx-container display="true" class="wide"><span class="wide">x</span></mjx-container>
<table style="width: 200px"><thead><tr><th>{header}</th><th>b</th></tr></thead>
<tbody><tr><td>1</td><td>2</td></tr></tbody></table>
</article></body></html>"""

TEXT_TABLE = "\n".join(["stride  GB/s  model", "1       900   1.00", "2       450   0.50",
                        "4       230   0.25"])


def _faults(tmp_path, **kw):
    page = dict(wrap="normal", eq=300, printed="stride 1: 900 GB/s", header="bandwidth")
    page.update(kw)
    (tmp_path / "page.html").write_text(PAGE.format(**page))
    faults, _ = cbb.browser_faults(tmp_path)
    return faults


def test_a_clean_page_passes(tmp_path):
    assert _faults(tmp_path) == []


def test_a_printed_text_table_fails(tmp_path):
    assert any("printed text table" in f for f in _faults(tmp_path, printed=TEXT_TABLE))


def test_a_display_equation_wider_than_the_column_fails(tmp_path):
    assert any("display equation" in f for f in _faults(tmp_path, eq=900))


def test_a_header_broken_inside_a_word_fails(tmp_path):
    faults = _faults(tmp_path, wrap="anywhere", header="supercalifragilisticexpialidocious")
    assert any("breaks inside the word" in f for f in faults)


def test_markdown_left_unrendered_fails_outside_code_only(tmp_path):
    """A directive fence shown as prose (a fence nested wrongly) fails the text pass; the same
    text inside a code block, where a page may show MyST on purpose, passes."""
    page = ("<html><body><article><p>{}</p><pre>````{{admonition}} shown on purpose\n"
            ":class: dropdown</pre></article></body></html>")
    (tmp_path / "bad.html").write_text(page.format("````{admonition} Going deeper: why\n"
                                                   ":class: dropdown"))
    faults = cbb.text_faults(tmp_path)
    assert len(faults) == 1 and "bad.html" in faults[0] and "left as text" in faults[0]
    (tmp_path / "bad.html").write_text(page.format("prose"))
    assert cbb.text_faults(tmp_path) == []


def test_a_link_escaped_twice_fails(tmp_path):
    """An address whose "&" reached the page as "&amp;amp;" (MyST-Parser#760) loses its query
    parameters in the browser; escaped once, it is right."""
    page = '<html><body><article><p><a href="https://a.example/x?a=1&amp;{}b=2">x</a></p>' \
           '</article></body></html>'
    (tmp_path / "bad.html").write_text(page.format("amp;"))
    faults = cbb.text_faults(tmp_path)
    assert len(faults) == 1 and "escaped twice" in faults[0]
    (tmp_path / "bad.html").write_text(page.format(""))
    assert cbb.text_faults(tmp_path) == []
