"""After the book build (.ci/run): every page reads clean, as a reader sees it at 1280 px.

Run as ``python tests/check_built_book.py _build/html``; exits 1 naming each page and fault.

Two passes:

1. Over the HTML files: no page carries the build machine's simulator banner, a filesystem
   path of the build machine, a Python warning, or Markdown the build left unrendered (a
   directive's fence or option, a glue role) outside code.
2. In headless Chromium (``/usr/bin/chromium``, or ``$GPUPERF_CHROMIUM``) through Playwright,
   each page served from localhost at 1280 x 900 with every request to another host
   refused: no console error and no uncaught exception; no request leaves the book (math,
   scripts and fonts are served by the book itself); no raw TeX left once MathJax ran; no
   table, display equation or printed text table wider than the content column; no printed text
   table at all (rows of columns aligned with spaces: a table is HTML, sized for the page); no
   table header broken inside a word; no figure shrunk to fit it (a figure drawn wider
   than the column is shown smaller, and its labels with it); no explorer whose sliders fail
   to change its figure.
"""

from __future__ import annotations

import functools
import html
import http.server
import os
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from gpuperf._mode import SIMULATOR_BANNER  # noqa: E402

VIEWPORT = {"width": 1280, "height": 900}
# A figure may be scaled down by at most this factor before its labels get too small.
MAX_FIGURE_SHRINK = 1.12
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

# Text a reader must never see: the build machine's paths, Python's warnings.
_PATH = re.compile(r"(/(?:work|home|tmp|root|usr|opt)/[\w.-]+/|site-packages|[A-Z]:\\\\Users)")
_WARNING = re.compile(r"\b\w*Warning: |Traceback \(most recent call last\)")


def html_pages(root: Path) -> list[Path]:
    """The book's pages: not the index and search pages, not a redirect (index.html)."""
    return sorted(p for p in root.rglob("*.html")
                  if not p.name.startswith(("genindex", "search")) and "_static" not in p.parts
                  and 'http-equiv="Refresh"' not in p.read_text(errors="replace")[:2000])


def _visible_text(page: str) -> str:
    """The page's text outside scripts, styles and the search index (a crude, fast pass)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", page)


# MyST the build did not render, shown as text: a directive's fence or option, a glue role.
_RAW_MYST = re.compile(r"`{3,}\{[\w:-]+\}|:{3,}\{[\w:-]+\}|^\s*:class:\s*dropdown|\{glue:\w+\}`",
                       re.M)


def _prose_text(page: str) -> str:
    """The visible text outside code (``pre``, ``code``) as well as scripts and styles."""
    page = re.sub(r"<(pre|code)\b.*?</\1>", " ", page, flags=re.S | re.I)
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def text_faults(root: Path) -> list[str]:
    needle = SIMULATOR_BANNER.split(",")[0]  # "gpuperf: no GPU here"
    faults = []
    for p in html_pages(root):
        raw = p.read_text(encoding="utf-8", errors="replace")
        name = str(p.relative_to(root))
        if needle in raw:
            faults.append(f"{name}: the simulator banner (it belongs on stderr, which the "
                          "book drops)")
        text = _visible_text(raw)
        for rx, what in ((_PATH, "a filesystem path of the build machine"),
                         (_WARNING, "a Python warning or error")):
            m = rx.search(text)
            if m:
                start = max(0, m.start() - 60)
                faults.append(f"{name}: {what}: ...{' '.join(text[start:m.end() + 60].split())}...")
        m = re.search(r'href="([^"]*&amp;amp;[^"]*)"', raw)
        if m:
            faults.append(f"{name}: a link whose address is escaped twice: {m.group(1)}")
        prose = _prose_text(raw)
        m = _RAW_MYST.search(prose)
        if m:
            faults.append(f"{name}: Markdown the build left as text (a fence nested wrongly?): "
                          f"...{' '.join(prose[max(0, m.start() - 40):m.end() + 60].split())}...")
    return faults


_MEASURE = """() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const column = art.clientWidth;
  const out = {column, tables: [], figures: [], tex: [], code: []};
  for (const pre of art.querySelectorAll('pre')) {
    if (pre.scrollWidth > pre.clientWidth + 1) {
      out.code.push([Math.round(pre.scrollWidth), Math.round(pre.clientWidth),
                     pre.innerText.split('\\n')[0].slice(0, 60)]);
    }
  }
  out.equations = [];
  for (const eq of art.querySelectorAll('mjx-container[display="true"], mjx-container[jax][display]')) {
    const inner = eq.firstElementChild;
    const wide = Math.max(eq.scrollWidth, inner ? inner.getBoundingClientRect().width : 0);
    if (wide > column + 1) out.equations.push([Math.round(wide), eq.textContent.slice(0, 60)]);
  }
  // Printed output laid out as a table: three or more lines in a row whose fields are
  // separated by runs of spaces (a fixed-width text table wraps into noise on the page).
  out.printed = [];
  const tabular = /\\S {2,}\\S.*\\S {2,}\\S/;
  for (const pre of art.querySelectorAll('div.cell_output pre')) {
    let run = 0;
    for (const line of pre.innerText.split('\\n')) {
      run = tabular.test(line.trim()) ? run + 1 : 0;
      if (run >= 3) { out.printed.push(pre.innerText.split('\\n')[0].slice(0, 60)); break; }
    }
  }
  // A header cell whose word the browser broke across lines.
  out.broken = [];
  for (const th of art.querySelectorAll('table th')) {
    if (th.closest('details:not([open])')) continue;
    const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const node = walk.currentNode;
      for (const m of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) out.broken.push(m[0]);
      }
    }
  }
  for (const t of art.querySelectorAll('table')) {
    if (t.closest('details div.gp-wide')) continue;  // a folded full table scrolls in its box
    if (t.scrollWidth > column + 1) {
      const head = (t.rows[0] ? t.rows[0].innerText : '').replace(/\\s+/g, ' ').slice(0, 80);
      out.tables.push([Math.round(t.scrollWidth), head]);
    }
  }
  for (const img of art.querySelectorAll('img')) {
    const shown = img.getBoundingClientRect().width;
    if (img.naturalWidth === 0 && img.complete && img.getAttribute('src')) {
      out.figures.push([0, 0, img.getAttribute('src').slice(0, 60) + ' did not load']);
    } else if (shown > 0 && img.naturalWidth > shown * %(shrink)s) {
      out.figures.push([img.naturalWidth, Math.round(shown), img.getAttribute('alt') || '']);
    }
  }
  const walker = document.createTreeWalker(art, NodeFilter.SHOW_TEXT);
  const tex = /\\\\(frac|tfrac|times|text|mathrm|sum|le|ge|approx|cdot)\\b|\\$\\$|\\\\\\(|\\\\\\[/;
  while (walker.nextNode()) {
    const n = walker.currentNode;
    if (n.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
    if (tex.test(n.textContent)) out.tex.push(n.textContent.trim().slice(0, 80));
  }
  // Search fields a reader sees at this width (the theme can draw a second one in its header).
  out.searches = [...document.querySelectorAll('.search-button-field, form.bd-search')]
    .filter(e => e.getBoundingClientRect().width > 0 && getComputedStyle(e).visibility !== 'hidden')
    .length;
  return out;
}""" % {"shrink": MAX_FIGURE_SHRINK}

_EXPLORERS = """async () => {
  const bad = [];
  for (const root of document.querySelectorAll('.gp-flipbook')) {
    const img = root.querySelector('img');
    const inputs = root.querySelectorAll('input[type=range]');
    for (const el of inputs) {
      if (+el.max < 1) continue;
      const before = img.src;
      el.value = el.value === el.max ? '0' : el.max;
      el.dispatchEvent(new Event('input'));
      if (img.src === before && img.style.display !== 'none') bad.push(root.id + ': ' +
          (el.closest('label') ? el.closest('label').innerText.trim() : 'a slider'));
    }
  }
  return {count: document.querySelectorAll('.gp-flipbook').length, bad};
}"""


def _router(base: str, outside: list):
    """Serve the book's own requests; refuse and note any other."""
    def route(r):
        url = r.request.url
        if url.startswith(base) or url.startswith("data:"):
            r.continue_()
        else:
            outside.append(url)
            r.abort()
    return route


def browser_faults(root: Path) -> tuple[list[str], int]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return ["playwright is not installed: `pip install -r requirements-dev.txt`"], 0
    chromium = os.environ.get("GPUPERF_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        return [f"no Chromium at {chromium}: install Debian's `chromium` package, or set "
                "GPUPERF_CHROMIUM to a Chromium or Chrome binary"], 0

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    faults, explorers = [], 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for path in html_pages(root):
                name = str(path.relative_to(root))
                page = browser.new_page(viewport=VIEWPORT)
                errors, outside = [], []
                page.on("console", lambda m, e=errors: e.append(m.text)
                        if m.type == "error" else None)
                page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))

                page.route("**/*", _router(base, outside))
                page.goto(base + name, wait_until="load")
                # MathJax typesets after load; give it a moment to finish.
                page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                              " ? MathJax.startup.promise.then(() => true) : true")
                page.wait_for_timeout(300)
                m = page.evaluate(_MEASURE)
                ex = page.evaluate(_EXPLORERS)
                explorers += ex["count"]
                for url in sorted(set(outside)):
                    faults.append(f"{name}: loads {url} from outside the book")
                for err in errors:
                    if "net::ERR_FAILED" in err and outside:
                        continue  # the refused outside request, reported above
                    faults.append(f"{name}: console error: {err[:160]}")
                for width, head in m["tables"]:
                    faults.append(f"{name}: a table {width} px wide in a {m['column']} px "
                                  f"column ({head})")
                for width, text in m["equations"]:
                    faults.append(f"{name}: a display equation {width} px wide in a "
                                  f"{m['column']} px column ({text})")
                for first in m["printed"]:
                    faults.append(f"{name}: a printed text table (show it as an HTML table): "
                                  f"{first}")
                for word in sorted(set(m["broken"])):
                    faults.append(f"{name}: a table header breaks inside the word {word!r}")
                for wide, shown, first in m["code"]:
                    faults.append(f"{name}: a code block {wide} px wide scrolls in {shown} px "
                                  f"({first})")
                for natural, shown, alt in m["figures"]:
                    faults.append(f"{name}: a figure drawn {natural} px wide shown at {shown} "
                                  f"px {alt}".rstrip())
                if m["searches"] > 1:
                    faults.append(f"{name}: {m['searches']} search fields at "
                                  f"{VIEWPORT['width']} px (one is enough)")
                for tex in m["tex"]:
                    faults.append(f"{name}: raw TeX on the page: {tex}")
                for b in ex["bad"]:
                    faults.append(f"{name}: an explorer slider does not change its figure: {b}")
                page.close()
            browser.close()
    finally:
        server.shutdown()
    return faults, explorers


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html")
    if not root.is_dir():
        sys.exit(f"{root} is not a built book; build it first (jupyter-book build .).")
    faults = text_faults(root)
    more, explorers = browser_faults(root)
    faults += more
    if faults:
        print(f"{len(faults)} problem(s) in the built book:", file=sys.stderr)
        for f in faults:
            print("  " + f, file=sys.stderr)
        sys.exit(1)
    print(f"built book: {len(html_pages(root))} pages clean at {VIEWPORT['width']} px "
          f"(no banner, path, warning, raw TeX, outside request or console error; one search "
          f"field; no printed text table, no header broken inside a word; tables, equations, code "
          f"and figures fit the column; {explorers} explorers respond) "
          f"({root})")
