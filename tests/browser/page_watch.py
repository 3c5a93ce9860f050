"""A page watched for console errors and CSP violations: the browser tests of the calendar,
browse lists and notes fail on either."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import expect

# A loaded machine (two cores, several browsers) can take more than Playwright's default 5 s
# to draw a page: the waits are for events, so a long limit costs nothing when all is well.
expect.set_options(timeout=30_000)

WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


def listen(page: Any, width: int = 1440) -> list[str]:
    """The list that collects every console error, response of 400 or more and failed request
    of ``page`` from now on (the live stream cut when a page is left is the only failure
    allowed); the page records its CSP violations in ``window.__csp``; ``width`` px wide."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{page.url}: {m.text}")
            if m.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    page.on("requestfailed", lambda r: None if "/events/stream" in r.url
            and r.failure == "net::ERR_ABORTED" else problems.append(f"failed {r.url}"))
    page.add_init_script(WATCH_CSP)
    page.set_viewport_size({"width": width, "height": 900})
    return problems


@contextmanager
def watching(page: Any) -> Iterator[Any]:
    """``page``, failing at the block's end on any console error or CSP violation seen."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
            if r.status >= 400 else None)
    page.add_init_script(WATCH_CSP)
    yield page
    problems += [f"CSP: {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == [], "\n".join(problems)
