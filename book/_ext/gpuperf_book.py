"""The book's own Sphinx extension (loaded from _config.yml).

- Sets ``GPUPERF_STATIC_BOOK=1`` before any notebook runs: the kernels the build starts
  inherit it, and the explorers render as HTML that needs no kernel and no CDN.
- No launch (Colab) button on the Markdown pages: Colab opens notebooks, not MyST Markdown.
- Drops sphinx-thebe's scripts: the book has no live-code button, and Jupyter Book 1 adds
  thebe's configuration script twice (a console error on every page, "Identifier
  'THEBE_JS_URL' has already been declared", and a CDN address in every page).
"""

import os


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
    app.connect("html-page-context", _drop_thebe)
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", _no_launch_on_markdown, priority=600)
    app.add_css_file("gpuperf.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
