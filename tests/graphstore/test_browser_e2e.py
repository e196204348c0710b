"""End to end in a real Neo4j Browser: samples loaded, style dropped in, saved queries run.

A Neo4j server of its own serves Browser (``neo4j_server.start(with_browser=True)``; the
session server of the other tests has no HTTP connector, and keeping this one apart keeps
them as fast as before). Headless Chromium (Debian's ``chromium``, driven by Playwright's
Python package; no browser download) connects through Browser's connect form, drops
``graphstore/browser_style.grass`` on the window as a user would, and runs two saved queries
the way they are documented in docs/browser.md: a ``:params`` line, then the Cypher.
Screenshots go to ``test-artifacts/`` (git-ignored).

Outside CI the test skips when chromium, java, mvn or playwright is missing; with ``CI`` set
it fails instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventkg.graphstore import open_store
from eventkg.graphstore.neo4j.server import launch as server_mod
from eventkg.graphstore.neo4j.server.jars import missing_tools
from eventkg.graphstore.saved_cypher import get_saved_query
from tests.conftest import selected_backends
from tests.support.paths import CHECKOUT
from tests.support.samples import ingest_samples

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

ROOT = CHECKOUT
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("EVENTKG_CHROMIUM", "/usr/bin/chromium")
STYLE = ROOT / "graphstore" / "browser_style.grass"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TIMEOUT_MS = 60_000


def _missing() -> list[str]:
    missing = list(missing_tools())
    if not (shutil.which(CHROMIUM) or Path(CHROMIUM).exists()):
        missing.append(f"chromium ({CHROMIUM})")
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright Python package")
    return missing


@pytest.fixture(scope="module")
def browser_server(request: pytest.FixtureRequest) -> Iterator[server_mod.Neo4jServer]:
    """A Neo4j server with Browser on its HTTP port, holding every project sample."""
    if "neo4j" not in selected_backends(request.config):
        pytest.skip("the neo4j backend is not selected (--backends / EVENTKG_TEST_BACKENDS)")
    missing = _missing()
    if missing:
        reason = f"Browser end-to-end test needs {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so this does not skip)", pytrace=False)
        pytest.skip(reason)
    server = server_mod.start(
        with_browser=True, heap="1g", pagecache="128m", jvm_flags=["-XX:TieredStopAtLevel=1"]
    )
    try:
        with open_store(server.url) as store:
            ingest_samples(store, ROOT / "ingest" / "samples")
        yield server
    finally:
        server.stop()


def _run(page, text: str) -> None:
    """Type into Browser's main editor (inserted, so no auto-closed brackets) and run it."""
    page.locator(".monaco-editor").first.click()
    page.keyboard.insert_text(text)
    page.get_by_test_id("editor-Run").first.click()


def _wait_for(check, what: str, timeout: float = TIMEOUT_MS / 1000, last=None):
    """Poll ``check`` until truthy; on timeout, say what ``last()`` (or ``check``) saw."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}; last seen: {(last or check)()!r}")


def _svg_captions(frame) -> list[str]:
    """The node captions Browser drew (a long caption is split over several <text> lines)."""
    return frame.locator("svg g.node").evaluate_all(
        "gs => gs.map(g => [...g.querySelectorAll('text')].map(t => t.textContent.trim()).join(' ').trim())"
    )


def _all_shown(expected: set[str], captions: list[str]) -> bool:
    """Every expected caption is drawn, in full or cut short with an ellipsis by Browser."""
    def shown(text: str) -> bool:
        return any(c == text or (c.endswith("…") and text.startswith(c[:-1])) for c in captions)

    return all(shown(t) for t in expected)


def test_saved_queries_in_neo4j_browser(browser_server: server_mod.Neo4jServer) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    shots = []
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(browser_server.browser_url)

            # the connect form: scheme, host:port, user, password
            page.get_by_test_id("boltaddress").wait_for()
            page.locator("select").first.select_option("bolt://")
            page.get_by_test_id("boltaddress").fill(f"127.0.0.1:{browser_server.bolt_port}")
            page.get_by_test_id("username").fill(browser_server.user or "")
            page.get_by_test_id("password").fill(browser_server.password or "")
            page.get_by_test_id("connect").click()
            page.get_by_text("You are connected as user").first.wait_for()

            # the style: dropped on the window, as docs/browser.md tells users to do
            drop = page.evaluate_handle(
                "text => { const dt = new DataTransfer();"
                " dt.items.add(new File([text], 'browser_style.grass', {type: 'text/plain'})); return dt; }",
                STYLE.read_text(encoding="utf-8"),
            )
            page.dispatch_event("[data-testid='main']", "drop", {"dataTransfer": drop})
            style_frame = page.get_by_test_id("frame").first
            _wait_for(lambda: "node.Event" in style_frame.inner_text(), "the :style frame to show node.Event")

            # 1. causes and effects of "learn", drawn as a graph with the text captions
            query = get_saved_query("causes-and-effects")
            params, cypher = query.browser_text().split("\n", 1)
            _run(page, params)
            _run(page, cypher)
            frame = page.get_by_test_id("frame").first
            expected = {"learn", "read textbook", "remember information", "pass exam", "ask teacher"}
            captions = _wait_for(
                lambda: (c := _svg_captions(frame)) and _all_shown(expected, c) and c,
                "the graph's captions",
                last=lambda: _svg_captions(frame),
            )
            assert not any(c.isdigit() for c in captions), captions  # the style replaced cluster-number captions
            shots.append(ARTIFACTS / "browser-causes-and-effects.png")
            page.screenshot(path=str(shots[-1]))

            # 2. the abstractions of an AbsPyramid head, read in the table view
            query = get_saved_query("abstractions")
            params, cypher = query.browser_text().split("\n", 1)
            _run(page, params)
            _run(page, cypher)
            frame = page.get_by_test_id("frame").first
            _wait_for(lambda: frame.locator("svg g.node").count() > 0, "the abstractions graph")
            frame.get_by_test_id("cypherFrameSidebarTable").click()
            wanted = ["NOUN_ENTAIL", "PersonX study for test", "academic preparation", "PersonX dance for exam"]
            _wait_for(lambda: all(w in frame.inner_text() for w in wanted), "the table rows")
            table_text = frame.inner_text()
            assert "EVENT_ENTAIL" in table_text and "VERB_ENTAIL" in table_text
            shots.append(ARTIFACTS / "browser-abstractions-table.png")
            page.screenshot(path=str(shots[-1]))
            frame.get_by_test_id("cypherFrameSidebarVisualization").click()
            concepts = {"test", "assessment", "prepare", "learn", "academic preparation"}  # valid ones only
            _wait_for(
                lambda: _all_shown(concepts, _svg_captions(frame)),
                "the Concept nodes in the graph",
                last=lambda: _svg_captions(frame),
            )
            shots.append(ARTIFACTS / "browser-abstractions-graph.png")
            page.screenshot(path=str(shots[-1]))
        finally:
            chromium.close()
    for shot in shots:
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
