"""The built book as a self-contained static site folder (``make publish``).

``python -m fedrepro.report.publish [HTML_DIR [SITE_DIR]]`` copies the HTML build
(``_build/html``) to ``_build/site`` and checks that the folder works wherever it is put:
opened from ``file://``, or served from any sub-path (GitHub Pages serves a project at
``https://OWNER.github.io/REPO/``):

* every ``href``/``src`` is relative: no root-absolute (``/...``) or ``file:`` link, no path
  of the machine that built it;
* nothing is fetched from another host (scripts, styles, fonts, images: the site works
  without a network; plain links to other sites are fine);
* ``.nojekyll`` is present, so that GitHub Pages serves the ``_static``/``_images`` folders.

The build's own bookkeeping (``.buildinfo``, ``.doctrees``) is left out.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

__all__ = ["check_site", "publish"]

_ATTR = re.compile(r'\b(href|src)\s*=\s*"([^"]*)"', re.IGNORECASE)
_REMOTE = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
#: Tags whose ``src``/``href`` the browser fetches while loading the page.
_FETCHED = re.compile(r'<(script|img|link|source|iframe)\b[^>]*>', re.IGNORECASE)


def check_site(site: Path) -> list[str]:
    """Problems that would stop ``site`` from working from ``file://`` or a sub-path."""
    site = Path(site)
    if not (site / "index.html").is_file():
        return [f"{site}: no index.html"]
    problems = []
    if not (site / ".nojekyll").exists():
        problems.append(".nojekyll is missing (GitHub Pages would drop _static/)")
    build_root = str(site.resolve().parent.parent)
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site)
        text = page.read_text(encoding="utf-8", errors="replace")
        for _, url in _ATTR.findall(text):
            if url.startswith("/") and not url.startswith("//"):
                problems.append(f"{rel}: root-absolute link {url}")
            elif url.lower().startswith("file:"):
                problems.append(f"{rel}: file link {url}")
        for tag in _FETCHED.finditer(text):
            element = tag.group(0)
            if tag.group(1).lower() == "link" and not re.search(r'rel="(?:stylesheet|icon|preload|modulepreload)"',
                                                                 element):
                continue
            for _, url in _ATTR.findall(element):
                if _REMOTE.match(url):
                    problems.append(f"{rel}: fetched from another host: {url}")
        if build_root != "/" and build_root in text:
            problems.append(f"{rel}: names the build machine's path {build_root}")
    return problems


def publish(html: Path, site: Path) -> Path:
    """Copy the HTML build ``html`` to ``site`` (replaced), add ``.nojekyll``, check it.

    Raises ``ValueError`` naming the problems when the folder would not work as a site."""
    html, site = Path(html), Path(site)
    if not (html / "index.html").is_file():
        raise ValueError(f"html must be a built book (with index.html), got {html}")
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(html, site, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    (site / ".nojekyll").write_text("")
    problems = check_site(site)
    if problems:
        raise ValueError("the site folder is not self-contained:\n  " + "\n  ".join(problems[:40]))
    return site


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    html = Path(args[0]) if args else Path("_build/html")
    site = Path(args[1]) if len(args) > 1 else Path("_build/site")
    out = publish(html, site)
    pages = sum(1 for _ in out.rglob("*.html"))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"static site: {out}/ ({pages} pages, {size / 1e6:.1f} MB); open {out}/index.html or serve the folder "
          "from any path")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
