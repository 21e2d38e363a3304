"""The book's own Sphinx extension (loaded from _config.yml).

- A chapter page is ``notebooks/NN_name.ipynb``, the student copy that the page's Colab and
  download buttons hand out; its content is read from ``solutions/NN_name.ipynb``, the
  chapter with its solutions, which the build executes. A student copy that is not current
  (``python -m gpuperf.assign solutions/ --out notebooks/ --check``) is a build warning.
- Sets ``GPUPERF_STATIC_BOOK=1`` before any notebook runs: the kernels the build starts
  inherit it, and the explorers render as HTML that needs no kernel and no CDN.
- No launch (Colab) button on the Markdown pages: Colab opens notebooks, not MyST Markdown.
- Drops sphinx-thebe's scripts: the book has no live-code button, and Jupyter Book 1 adds
  thebe's configuration script twice (a console error on every page, "Identifier
  'THEBE_JS_URL' has already been declared", and a CDN address in every page).
- ``GPUPERF_BOOK_SOLUTIONS=hide`` builds the book for a class: every solution (gated
  ``solution-start``/``solution-end`` or a ``solution`` directive) is left out of the pages
  (the notebooks offered for download are student copies either way).
  sphinx-exercise's own ``hide_solutions`` cannot do this: it drops the opening fence of a
  gated solution and leaves the closing one, which no builder can write.
- Undoes MyST's HTML escaping of a link's address (``&`` becomes ``&amp;`` in the doctree,
  and the HTML writer escapes it again, so ``?a=1&b=2`` reached the browser as
  ``?a=1&amp;b=2``: executablebooks/MyST-Parser#760).
"""

import os

SOLUTIONS_ENV = "GPUPERF_BOOK_SOLUTIONS"


def _hide_solutions() -> bool:
    value = os.environ.get(SOLUTIONS_ENV, "show").strip().lower()
    if value not in ("show", "hide"):
        raise ValueError(f"{SOLUTIONS_ENV}={value!r}: use 'hide' (a book without solutions) "
                         "or 'show' (the default).")
    return value == "hide"


def _solution_remover():
    from sphinx.transforms import SphinxTransform
    from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

    class RemoveSolutions(SphinxTransform):
        """After sphinx-exercise merges gated solutions (priority 10), remove them all."""

        default_priority = 11

        def apply(self):
            for kind in (solution_node, solution_start_node, solution_end_node):
                for node in list(self.document.findall(kind)):
                    node.parent.remove(node)

    return RemoveSolutions


# What markdown-it's escapeHtml writes, undone in reverse (``&amp;`` last).
_ESCAPED = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&"))


def unescape_address(uri: str) -> str:
    """A link's address as written in the source, from the one MyST stores (HTML-escaped)."""
    for escaped, plain in _ESCAPED:
        uri = uri.replace(escaped, plain)
    return uri


def _link_unescaper():
    from docutils import nodes
    from sphinx.transforms import SphinxTransform

    class UnescapeLinks(SphinxTransform):
        """The addresses of external links as written: the HTML writer escapes them once."""

        default_priority = 900

        def apply(self):
            for node in self.document.findall(nodes.reference):
                uri = node.get("refuri")
                if uri and "&" in uri:
                    node["refuri"] = unescape_address(uri)

    return UnescapeLinks


def _chapter_with_solutions(app, docname, source):
    """Read the page ``notebooks/X`` (a student copy) from ``solutions/X.ipynb``."""
    from pathlib import Path

    from gpuperf import assign

    folder, _, name = docname.rpartition("/")
    if folder != assign.STUDENT:
        return
    chapter = Path(app.srcdir, assign.SOURCE, name + ".ipynb")
    if not chapter.exists():
        return
    from sphinx.util import logging

    copy = Path(app.srcdir, assign.STUDENT)
    stale = assign.stale_copies(chapter, copy)
    if stale:
        logging.getLogger(__name__).warning(
            f"{stale[0]}: write the student copies again with python -m gpuperf.assign "
            f"{assign.SOURCE}/ --out {assign.STUDENT}/ --force", location=docname)
    app.env.note_dependency(str(chapter))
    source[0] = chapter.read_text(encoding="utf-8")


def _drop_thebe(app, pagename, templatename, context, doctree):
    def keep(asset):
        text = f"{getattr(asset, 'filename', asset)} {getattr(asset, 'attributes', {})}"
        return "thebe" not in text.lower() and "THEBE_JS_URL" not in text

    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if keep(a)]


def _no_launch_on_markdown(app, pagename, templatename, context, doctree):
    if str(context.get("sourcename", "")).endswith((".md", ".md.txt")):
        context["header_buttons"] = [b for b in context.get("header_buttons", [])
                                     if b.get("label") != "launch-buttons"]


def setup(app):
    os.environ["GPUPERF_STATIC_BOOK"] = "1"
    if _hide_solutions():
        app.add_transform(_solution_remover())
    app.add_transform(_link_unescaper())
    app.connect("source-read", _chapter_with_solutions)
    app.connect("html-page-context", _drop_thebe)
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", _no_launch_on_markdown, priority=600)
    app.add_css_file("gpuperf.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
