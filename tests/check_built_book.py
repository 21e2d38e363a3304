"""After the book build (.ci/run): no page shows the build machine's simulator banner.

Run as ``python tests/check_built_book.py _build/html``; exits 1 naming the pages.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from gpuperf._mode import SIMULATOR_BANNER  # noqa: E402


def pages_with_banner(root: Path) -> list[str]:
    needle = SIMULATOR_BANNER.split(",")[0]  # "gpuperf: no GPU here"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html")
                  if needle in p.read_text(encoding="utf-8", errors="replace"))


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html")
    if not root.is_dir():
        sys.exit(f"{root} is not a built book; build it first (jupyter-book build .).")
    bad = pages_with_banner(root)
    if bad:
        sys.exit("the simulator banner is on these pages (it belongs on stderr, which the book "
                 "drops): " + ", ".join(bad))
    print(f"built book: no page shows the simulator banner ({root})")
