"""The built book opened in a real browser (headless Chromium, network off).

The book is built into a temporary folder, served from a sub-path of a local HTTP server
(``http://127.0.0.1:PORT/some/sub/path/``: links that only work from the site root fail), and
every page is opened in the system's Chromium driven by Selenium. Every host name other than
127.0.0.1 resolves to nothing, so anything fetched from a CDN is a failed request. For each
page the test asserts:

* no console error and no failed request (network error or HTTP status >= 400);
* no ``\\(`` or ``\\[`` left in the rendered text (MathJax typeset every formula), nor a TeX
  command outside a formula (``\\varepsilon``, ``\\|``: a link text without delimiters);
* every image loaded, with a non-zero size;
* no element wider than the content column, and no block that scrolls sideways, except a
  table inside its scrollable box;
* every internal link resolves to a page of the site and its anchor to an element there;
* what it loads besides its HTML and images (scripts, styles, fonts) within
  :data:`ASSET_BUDGET_BYTES`.

A table may be wider than the column inside its scrollable box, and so may a display
equation inside its MathJax box (MathJax 3 does not break lines); nothing else.

Full-page screenshots of the report page and of one chapter of each part of ``_toc.yml`` are
saved under ``_build/screenshots/`` (with ``pages.json``: the weight and counts per page).

Chromium and its driver come from the system (Debian: ``apt-get install chromium
chromium-driver``; ``.ci/run`` installs them when missing). Without them the test is skipped
with that hint, except in CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "_build" / "screenshots"
#: Sub-path the site is served from (as on GitHub Pages: https://OWNER.github.io/REPO/).
SUB_PATH = "/fedrepro/book/"
#: Largest weight of what a page loads besides its own HTML and images (scripts, styles,
#: fonts; uncompressed). Now: 0.96 MB without mathematics, 1.7-1.9 MB with it (MathJax's
#: loader, TeX input, CommonHTML output and fonts: 0.9 MB). Before, the theme alone loaded
#: 2.46 MB a page (1.49 MB of it the icon script), plus MathJax from a CDN where there was math.
ASSET_BUDGET_BYTES = 2_000_000
WINDOW = (1280, 900)

INSTALL_HINT = ("the browser test needs Chromium and its driver: `apt-get install chromium "
                "chromium-driver` (Debian/Ubuntu) and the pinned Python set (`make setup`)")

pytestmark = [pytest.mark.book, pytest.mark.browser, pytest.mark.slow]


def _browser_paths() -> tuple[str, str] | None:
    browser = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                                shutil.which("google-chrome")) if p), None)
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists()
                                              else None)
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None
    return (browser, driver) if browser and driver else None


def _require_browser() -> tuple[str, str]:
    paths = _browser_paths()
    if paths is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but " + INSTALL_HINT)
        pytest.skip(INSTALL_HINT)
    return paths


# --------------------------------------------------------------------------------------
# The site: built once, served from a sub-path
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_browser()
    out = Path(os.environ.get("FEDREPRO_BROWSER_SITE", "")) if os.environ.get("FEDREPRO_BROWSER_SITE") else None
    if out is None:  # build the book (FEDREPRO_BROWSER_SITE: test an already built site instead)
        tmp = tmp_path_factory.mktemp("book")
        exe = Path(sys.executable).parent / "jupyter-book"
        proc = subprocess.run([str(exe), "build", str(REPO), "-W", "-n", "--keep-going", "--path-output", str(tmp)],
                              capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        out = tmp / "_build" / "html"
    assert (out / "index.html").exists(), out

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            path = urllib.parse.urlsplit(path).path
            if not path.startswith(SUB_PATH):
                return str(out / "__outside_the_sub_path__")
            return super().translate_path("/" + path[len(SUB_PATH):])

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}{SUB_PATH}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def driver(site):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = _require_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--hide-scrollbars",
                # network off: every host but the local server resolves to nothing
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                "--disable-background-networking", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    drv.execute_cdp_cmd("Network.enable", {})
    drv.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})  # each page's full weight
    drv.set_page_load_timeout(120)
    drv.set_script_timeout(120)
    try:
        yield drv
    finally:
        drv.quit()


def _pages(root: Path) -> list[str]:
    skip = ("_static/", "_sources/", "_images/", "_downloads/")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html") if not str(p.relative_to(root)).startswith(skip))


# --------------------------------------------------------------------------------------
# What is measured on one page
# --------------------------------------------------------------------------------------

_WAIT_FOR_PAGE = """
const done = arguments[arguments.length - 1];
const settle = async () => {
  window.scrollTo(0, document.body.scrollHeight);   // let lazy images load
  await new Promise(r => setTimeout(r, 100));
  window.scrollTo(0, 0);
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  if (document.fonts) { await document.fonts.ready; }
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  await new Promise(r => setTimeout(r, 300));
};
settle().then(() => done(true), e => done(String(e)));
"""

_MEASURE = r"""
const out = {};
// text left for MathJax (code, scripts and typeset math excluded)
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code, script, style, textarea, mjx-container, .highlight').forEach(e => e.remove());
const text = body.textContent;
out.raw_tex = [];
// "\(" / "\[": a formula MathJax did not typeset; "\varepsilon", "\|": TeX outside any formula
for (const m of text.matchAll(/\\(?:[(\[|]|[a-zA-Z]{2,})/g)) {
  out.raw_tex.push(text.slice(Math.max(0, m.index - 40), m.index + 40));
}
out.has_mathjax = !!window.MathJax;
// images
out.images = Array.from(document.images).map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0,
  w: i.getBoundingClientRect().width, h: i.getBoundingClientRect().height, visible: i.offsetParent !== null}));
// widths: against the article (the content column)
const article = document.querySelector('article.bd-article') || document.querySelector('[role="main"]');
out.too_wide = [];
if (article) {
  const right = article.getBoundingClientRect().right + 1;
  // allowed to be wider than the column: a table in its scrollable box, and a display
  // equation in its own scrollable MathJax box (MathJax 3 does not break lines)
  const inScrollTable = e => !!e.closest('.fedrepro-table-wrapper, .pst-scrollable-table-container, .table-wrapper, ' +
                                         'mjx-container[display="true"]');
  const describe = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).slice(0, 3).join('.') : '') +
      ' "' + (e.textContent || '').trim().slice(0, 60) + '"';
  for (const e of article.querySelectorAll('*')) {
    if (inScrollTable(e) || e.closest('mjx-assistive-mml')) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const style = getComputedStyle(e);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    if (r.right > right) { out.too_wide.push('beyond the column by ' + Math.round(r.right - right) + ' px: ' + describe(e)); continue; }
    if (e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(style.overflowX) && e.clientWidth > 0) {
      out.too_wide.push('scrolls sideways by ' + (e.scrollWidth - e.clientWidth) + ' px: ' + describe(e));
    }
  }
}
// links
out.links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
out.ids = Array.from(document.querySelectorAll('[id]')).map(e => e.id);
// weight: the page and every resource it loaded; "assets": scripts, styles and fonts
const nav = performance.getEntriesByType('navigation')[0];
const res = performance.getEntriesByType('resource');
out.weight = (nav ? nav.encodedBodySize : 0) + res.reduce((s, r) => s + (r.encodedBodySize || 0), 0);
out.html_bytes = nav ? nav.encodedBodySize : 0;
out.image_bytes = res.filter(r => r.initiatorType === 'img' || /\.(png|jpe?g|svg|gif)(\?|$)/.test(r.name))
  .reduce((s, r) => s + (r.encodedBodySize || 0), 0);
out.asset_bytes = out.weight - out.html_bytes - out.image_bytes;
out.resources = performance.getEntriesByType('resource').map(r => [r.name, r.encodedBodySize]);
out.height = document.documentElement.scrollHeight;
return out;
"""


def _load(drv, url: str) -> object:
    """Open ``url``, follow a meta-refresh redirect (the site's index.html), let the page settle
    (MathJax done, fonts and images loaded); True when it did, else the error."""
    drv.get(url)
    deadline = time.time() + 30
    while time.time() < deadline:
        state = drv.execute_script(
            "return [document.readyState, !!document.body,"
            " !!document.querySelector('meta[http-equiv=Refresh], meta[http-equiv=refresh]')]")
        if state[0] == "complete" and state[1] and not state[2]:
            break
        time.sleep(0.2)
    return drv.execute_async_script(_WAIT_FOR_PAGE)


def _failed_requests(perf_log: list[dict]) -> list[str]:
    failed, urls = [], {}
    for entry in perf_log:
        msg = json.loads(entry["message"])["message"]
        params = msg.get("params", {})
        if msg["method"] == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif msg["method"] == "Network.responseReceived":
            status = params["response"]["status"]
            if status >= 400:
                failed.append(f"HTTP {status}: {params['response']['url']}")
        elif msg["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f"{params.get('errorText')}: {urls.get(params['requestId'], params['requestId'])}")
    return failed


def _screenshot(drv, path: Path) -> None:
    metrics = drv.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics["contentSize"]
    shot = drv.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
    import base64

    path.write_bytes(base64.b64decode(shot["data"]))


def _screenshot_pages() -> list[str]:
    """The report page and the first notebook chapter of every part (else its first page)."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    pages = ["book/report.html"]
    for part in toc.get("parts", []):
        files = [c["file"] for c in part.get("chapters", [])]
        notebooks = [f for f in files if (REPO / f"{f}.ipynb").exists()]
        choice = (notebooks or files)[0]
        if f"{choice}.html" not in pages:
            pages.append(f"{choice}.html")
    return pages


def _target_ok(root: Path, base_url: str, url: str, ids_cache: dict) -> str | None:
    """None when an internal link resolves; else why not."""
    parts = urllib.parse.urlsplit(url)
    rel = urllib.parse.unquote(parts.path[len(urllib.parse.urlsplit(base_url).path):])
    if not parts.path.startswith(urllib.parse.urlsplit(base_url).path):
        return "points outside the site's folder"
    target = root / rel
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return "no such file"
    if parts.fragment and target.suffix == ".html":
        if target not in ids_cache:
            html = target.read_text(encoding="utf-8", errors="replace")
            ids_cache[target] = set(re.findall(r'\bid="([^"]+)"', html)) | set(re.findall(r'\bname="([^"]+)"', html))
        if urllib.parse.unquote(parts.fragment) not in ids_cache[target]:
            return f"no element with id {parts.fragment!r}"
    return None


# --------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------

def test_every_page_renders_offline_in_chromium(site, driver):
    root, base = site
    pages = _pages(root)
    assert len(pages) >= 10, pages
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = set(_screenshot_pages())
    problems: dict[str, list[str]] = {}
    summary: dict[str, dict] = {}
    ids_cache: dict = {}
    for page in pages:
        driver.get_log("browser")  # drop what an earlier page left
        driver.get_log("performance")
        settled = _load(driver, base + page)
        info = driver.execute_script(_MEASURE)
        found = [] if settled is True else [f"page did not settle: {settled}"]
        console = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        found += [f"console error: {m}" for m in console]
        found += [f"failed request: {m}" for m in _failed_requests(driver.get_log("performance"))]
        found += [f"raw TeX left: ...{t}..." for t in info["raw_tex"][:5]]
        found += [f"image not loaded or empty: {i['src']}" for i in info["images"]
                  if i["visible"] and not (i["ok"] and i["w"] > 0 and i["h"] > 0)]
        found += [f"too wide: {w}" for w in info["too_wide"][:5]]
        for url in sorted(set(info["links"])):
            if not url.startswith(base.split(SUB_PATH)[0]) or url.startswith(("mailto:", "javascript:")):
                continue
            why = _target_ok(root, base, url, ids_cache)
            if why:
                found.append(f"broken link {url}: {why}")
        if info["asset_bytes"] > ASSET_BUDGET_BYTES:
            big = sorted(info["resources"], key=lambda r: -r[1])[:3]
            found.append(f"scripts, styles and fonts weigh {info['asset_bytes']} B, over the budget "
                         f"{ASSET_BUDGET_BYTES} B (largest: {big})")
        summary[page] = {"weight_bytes": info["weight"], "html_bytes": info["html_bytes"],
                         "image_bytes": info["image_bytes"], "asset_bytes": info["asset_bytes"],
                         "largest_assets": [[urllib.parse.urlsplit(n).path.removeprefix(SUB_PATH), b]
                                            for n, b in sorted(info["resources"], key=lambda r: -r[1])[:12]],
                         "images": len(info["images"]),
                         "links": len(set(info["links"])), "mathjax": info["has_mathjax"], "problems": len(found)}
        if page in shots:
            name = page.removesuffix(".html").replace("/", "-") + ".png"
            _screenshot(driver, SCREENSHOTS / name)
            summary[page]["screenshot"] = name
        if found:
            problems[page] = found
    (SCREENSHOTS / "pages.json").write_text(json.dumps(summary, indent=1) + "\n")
    assert all((SCREENSHOTS / s["screenshot"]).stat().st_size > 10_000 for s in summary.values() if "screenshot" in s)
    assert not problems, "\n".join(f"{page}:\n  " + "\n  ".join(found) for page, found in problems.items())


def test_search_finds_pages_with_readable_snippets(site, driver):
    """The one search box: results for a word of the book, each with a snippet of page text."""
    root, base = site
    driver.get(base + "search.html?q=privacy")
    deadline = time.time() + 60
    items, snippets = [], []
    while time.time() < deadline:  # results appear one by one, snippets when their page is fetched
        items = driver.execute_script(
            "return Array.from(document.querySelectorAll('#search-results li')).map(li => li.textContent)")
        snippets = driver.execute_script(
            "return Array.from(document.querySelectorAll('#search-results li p.context')).map(p => p.textContent)")
        status = driver.execute_script("const s = document.querySelector('#search-results .search-summary');"
                                       "return s ? s.textContent : ''")
        if items and status and len(snippets) == len(items):
            break
        time.sleep(0.5)
    assert items, "search returned no result"
    assert len(snippets) == len(items), "every result has a snippet"
    for text in snippets:  # page text, not the header buttons' ".md" / ".ipynb" / ".pdf"
        assert len(text) > 40 and not re.search(r"(?:^|\.{3}|…)\s*\.(?:md|ipynb|pdf)\b", text), text[:200]
    assert _load(driver, base + "book/report.html") is True  # the theme lays the header out once the page settles
    boxes = driver.execute_script(
        "return Array.from(document.querySelectorAll('.search-button-field, input[type=search], .bd-search'))"
        ".filter(e => e.offsetParent !== null).length")
    assert boxes == 1, f"{boxes} visible search boxes on a page"


def test_published_folder_works_from_file_urls(site, driver, tmp_path):
    """`make publish`'s folder opened from file://: pages load, MathJax typesets, nothing fails."""
    from fedrepro.report.publish import publish

    root, _ = site
    folder = publish(root, tmp_path / "site")
    for page in ("index.html", "book/fedplt/theory.html", "book/report.html"):
        driver.get_log("browser")
        driver.get_log("performance")
        assert _load(driver, (folder / page).resolve().as_uri()) is True
        info = driver.execute_script(_MEASURE)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        failed = _failed_requests(driver.get_log("performance"))
        assert driver.current_url.startswith("file://"), driver.current_url
        assert not errors and not failed and not info["raw_tex"], (page, errors, failed, info["raw_tex"][:3])
        assert all(i["ok"] for i in info["images"] if i["visible"]), page
