"""The book's own Sphinx extension (loaded from _config.yml).

- Sets ``GPUPERF_STATIC_BOOK=1`` before any notebook runs: the kernels the build starts
  inherit it, and the explorers render as HTML that needs no kernel and no CDN.
- No launch (Colab) button on the Markdown pages: Colab opens notebooks, not MyST Markdown.
- Drops sphinx-thebe's scripts: the book has no live-code button, and Jupyter Book 1 adds
  thebe's configuration script twice (a console error on every page, "Identifier
  'THEBE_JS_URL' has already been declared", and a CDN address in every page).
- ``GPUPERF_BOOK_SOLUTIONS=hide`` builds the book for a class: every solution (gated
  ``solution-start``/``solution-end`` or a ``solution`` directive) is left out of the pages,
  and the notebooks offered for download are the student copies (``gpuperf.assign``).
  sphinx-exercise's own ``hide_solutions`` cannot do this: it drops the opening fence of a
  gated solution and leaves the closing one, which no builder can write.
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


def _student_downloads(app, exception):
    """The notebooks a reader downloads from a book without solutions are student copies."""
    if exception is not None or app.builder.format != "html":
        return
    from pathlib import Path

    import nbformat

    from gpuperf import assign

    for path in Path(app.outdir, "_sources").rglob("*.ipynb"):
        nb = assign.student_copy(nbformat.read(path, as_version=4))
        nbformat.write(nb, path)


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
        app.connect("build-finished", _student_downloads)
    app.connect("html-page-context", _drop_thebe)
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", _no_launch_on_markdown, priority=600)
    app.add_css_file("gpuperf.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
