"""What a chapter's cells hand to the book's prose: numbers computed from the record.

``glue("copy_pct", 93.4, "{:.0f}%")`` in a code cell, and ``{glue:text}`copy_pct``` in the
Markdown beside it, put the formatted value into the sentence when Jupyter Book builds the page
(myst-nb's *glue*). Nothing is displayed in the notebook itself, so a cell can glue many values;
the text is formatted here, so the sentence shows exactly the digits the cell chose.

The output is the one myst-nb's own ``glue(..., display=False)`` writes (a ``papermill.record``
MIME bundle), made here so that a notebook run without myst-nb (Colab, a plain Jupyter) needs
nothing more than IPython.
"""

from __future__ import annotations

import re

from . import validate as v

_PREFIX = "application/papermill.record/"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def glue(name: str, value, fmt: str = "{}") -> str:
    """Store ``fmt.format(value)`` under ``name`` for the page's ``{glue:text}`name``` roles,
    and return the text (for an ``assert`` on the claim the sentence makes)."""
    v.string(name, "name")
    if not _NAME.match(name):
        raise ValueError(f"name={name!r} is not a glue key: use letters, digits and underscores "
                         "(a Python identifier), e.g. 'copy_pct'.")
    v.string(fmt, "fmt")
    try:
        text = fmt.format(value)
    except (ValueError, TypeError, IndexError, KeyError) as err:
        raise ValueError(f"fmt={fmt!r} cannot format value={value!r} ({err}); use a format "
                         "such as '{:.1f}' for a number or '{}' for text.") from None
    try:
        from IPython.display import display
    except ImportError:
        return text
    # Stored as a Python string literal, as IPython shows a str: myst-nb reads text/plain with
    # ast.literal_eval, which would turn "65,536" into the tuple (65, 536) and print that.
    display({_PREFIX + "text/plain": repr(text)}, raw=True,
            metadata={"scrapbook": {"name": name, "mime_prefix": _PREFIX}})
    return text
