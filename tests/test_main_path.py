"""Every chapter notebook's main path is short: at most ``MAIN_PATH_WORDS`` words of prose
outside folded "Going deeper" blocks (issue 60/61's reader standard). The counter itself is
tested on small cells."""

from pathlib import Path

import nbformat
import pytest

from gpuperf.nbtools import MAIN_PATH_WORDS, main_path_words

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _nb(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(s) for s in sources]
    return nb


def test_counter_skips_folded_blocks_code_and_math():
    assert main_path_words(_nb("one two three")) == 3
    folded = "intro words\n```{dropdown} Going deeper\nhidden words here\n```\nafter"
    assert main_path_words(_nb(folded)) == 3
    admon = ("```{admonition} Going deeper: why\n:class: dropdown\nmany hidden words\n```\nshown")
    assert main_path_words(_nb(admon)) == 1
    note = "```{note}\nvisible note words\n```"
    assert main_path_words(_nb(note)) == 3
    code = "text\n```python\nx = some_code(1)\n```\n$$\\frac{a}{b}$$ end"
    assert main_path_words(_nb(code)) == 2
    nested = ("````{dropdown} Deeper\nhidden\n```{note}\nhidden too\n```\n````\nseen")
    assert main_path_words(_nb(nested)) == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_main_path_is_short(path):
    words = main_path_words(path)
    print(f"{path.stem}: {words} words on the main path")
    assert words <= MAIN_PATH_WORDS, (
        f"{path.name}: {words} words of prose outside folded blocks, more than "
        f"{MAIN_PATH_WORDS}; fold side investigations into 'Going deeper' dropdowns")
