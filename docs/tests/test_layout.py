"""The built pages in a real browser: at 1280 px nothing widens the main text
column. Wide tables and code blocks scroll inside their own box.

Needs the HTML build (``docs/_build/html``) and Debian's chromium
(``/usr/bin/chromium``, or ``$CHROMIUM``), driven through Playwright; the
``docs`` nox session provides both. Screenshots and the measurements are
written to ``docs/_build/layout/``.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


DOCS = Path(__file__).resolve().parents[1]
HTML = DOCS / "_build" / "html"
OUT = DOCS / "_build" / "layout"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
WIDTH = 1280
# The index, a slice page with wide tables and long patches, the page of
# figures and plots, the guide, and the pages of generated tables.
PAGES = ["index", "rfc3", "performance", "backend-guide", "conformance", "reliability"]
# No network: the machine may have none, and Chromium's background services
# would wait for it.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Widths of the content column and of the page, and every element inside the
# article whose box or content reaches past the article's right edge, unless an
# ancestor inside the article clips or scrolls it (overflow-x not visible).
MEASURE = """() => {
  const main = document.querySelector("main.bd-main, main");
  const article = document.querySelector("article.bd-article, article");
  const right = article.getBoundingClientRect().right;
  const clips = (el) => getComputedStyle(el).overflowX !== "visible";
  const name = (el) => [el.tagName.toLowerCase(),
    ...(typeof el.className === "string" ? el.className.split(" ").filter(Boolean) : [])].join(".");
  const beyond = [];
  let scrolling = 0;
  for (const el of article.querySelectorAll("*")) {
    if (clips(el) && el.scrollWidth > el.clientWidth) scrolling += 1;
    let inside = false;
    for (let up = el.parentElement; up && up !== article; up = up.parentElement) {
      if (clips(up)) { inside = true; break; }
    }
    if (inside) continue;
    // Its box, or content that spills out of it (a line that cannot wrap).
    const box = el.getBoundingClientRect();
    const reach = Math.max(box.right, box.left + (clips(el) ? 0 : el.scrollWidth));
    if (box.width > 0 && reach > right + 0.5) {
      beyond.push({element: name(el), by: Math.round(reach - right)});
    }
  }
  return {
    main: {scrollWidth: main.scrollWidth, clientWidth: main.clientWidth},
    article: {scrollWidth: article.scrollWidth, clientWidth: article.clientWidth,
              right: Math.round(right)},
    page: {scrollWidth: document.documentElement.scrollWidth,
           clientWidth: document.documentElement.clientWidth},
    scrolling_boxes: scrolling,
    beyond: beyond,
  };
}"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    if not (HTML / "index.html").exists():
        pytest.fail(f"no HTML build in {HTML}: build it first (nox -s docs)")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (nox -s docs does)")
    sync_api = pytest.importorskip("playwright.sync_api")
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh profile per run
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": WIDTH, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.mark.parametrize("page", PAGES)
def test_nothing_overflows_the_main_column(page: str, site: str, browser) -> None:
    tab = browser.new_page()
    try:
        tab.goto(f"{site}/{page}.html", wait_until="load", timeout=60_000)
        measured = tab.evaluate(MEASURE)
        OUT.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(OUT / f"{page}.png"))
    finally:
        tab.close()
    (OUT / f"{page}.json").write_text(json.dumps(measured, indent=1) + "\n")
    print(f"{page}: {json.dumps(measured)}")

    assert measured["page"]["scrollWidth"] <= measured["page"]["clientWidth"], measured
    assert measured["main"]["scrollWidth"] <= measured["main"]["clientWidth"], measured
    assert measured["article"]["scrollWidth"] <= measured["article"]["clientWidth"], measured
    assert measured["beyond"] == [], measured


# Each table, and how far it reaches past its box (it would scroll there).
TABLES = """() => [...document.querySelectorAll("article table")].map(t => ({
  header: [...(t.querySelector("tr") || {cells: []}).cells].map(c => c.innerText.trim()),
  hidden: Math.round(Math.max(t.scrollWidth, t.getBoundingClientRect().width)
                     - t.parentElement.clientWidth),
}))"""


@pytest.mark.parametrize("page", PAGES)
def test_tables_fit_the_column(page: str, site: str, browser) -> None:
    """A table is read whole at 1280 px: long identifiers and messages wrap in
    their cells (_static/layout.css) instead of pushing columns out of view."""
    tab = browser.new_page()
    try:
        tab.goto(f"{site}/{page}.html", wait_until="load", timeout=60_000)
        tables = tab.evaluate(TABLES)
    finally:
        tab.close()
    assert [t for t in tables if t["hidden"] > 0] == []


def test_the_measure_sees_an_overflow(site: str, browser) -> None:
    """A line that cannot wrap, put in the article, is reported; the same line
    in a scrolling box is not."""
    tab = browser.new_page()
    try:
        tab.goto(f"{site}/rfc3.html", wait_until="load", timeout=60_000)
        tab.evaluate(
            """() => {
              const wide = document.createElement("p");
              wide.style.whiteSpace = "nowrap";
              wide.id = "too-wide";
              wide.textContent = "x".repeat(400);
              const boxed = document.createElement("div");
              boxed.style.overflowX = "auto";
              boxed.appendChild(wide.cloneNode(true));
              const article = document.querySelector("article");
              article.append(wide, boxed);
            }"""
        )
        measured = tab.evaluate(MEASURE)
    finally:
        tab.close()
    assert [b["element"] for b in measured["beyond"]] == ["p"], measured
    assert measured["article"]["scrollWidth"] > measured["article"]["clientWidth"]
