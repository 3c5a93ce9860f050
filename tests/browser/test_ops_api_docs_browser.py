"""The API docs (Swagger UI and ReDoc) render with no network beyond the app: every request
to another host is blocked, and the pages still list the API's operations."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from ui_harness import UiServer


@pytest.fixture
def offline_page(page: Any) -> Any:
    """The signed-in page with every request off 127.0.0.1/localhost aborted (and recorded)."""
    outside: list[str] = []
    csp: list[str] = []

    def route(r: Any) -> None:
        if urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.context.route("**/*", route)
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text
            else None)
    page.outside, page.csp = outside, csp
    return page


def test_swagger_ui_renders_the_operations_offline(offline_page: Any,
                                                   ui_server: UiServer) -> None:
    page = offline_page
    page.goto(ui_server.url + "/api/docs")
    page.locator(".opblock-summary-path", has_text="/api/v1/dags/{dag_id}/dagRuns").first \
        .wait_for(timeout=60000)
    assert page.locator(".opblock").count() > 20
    assert "statewright" in page.locator(".info .title").inner_text()
    assert page.outside == [] and page.csp == []


def test_redoc_renders_the_operations_offline(offline_page: Any, ui_server: UiServer) -> None:
    page = offline_page
    page.goto(ui_server.url + "/api/redoc")
    page.get_by_text("/api/v1/dags/{dag_id}/dagRuns").first.wait_for(
        state="attached", timeout=60000)
    assert page.locator("h1").first.inner_text().startswith("statewright")
    assert page.outside == []
    assert [m for m in page.csp if "script" in m] == []


def test_docs_pages_and_assets_need_a_login_and_name_no_cdn(ui_server: UiServer) -> None:
    for path in ("/api/docs", "/api/redoc", "/api/docs/assets/swagger-ui-bundle.js"):
        assert httpx.get(ui_server.url + path).status_code == 401, path
    docs = httpx.get(ui_server.url + "/api/docs", headers=ui_server.headers)
    assert docs.status_code == 200 and "cdn" not in docs.text and "https://" not in docs.text
    assert "script-src 'self';" in docs.headers["content-security-policy"]
    assert "<script>" not in docs.text  # no inline script
    asset = httpx.get(ui_server.url + "/api/docs/assets/redoc.standalone.js",
                      headers=ui_server.headers)
    assert asset.status_code == 200 and len(asset.content) > 100_000
    missing = httpx.get(ui_server.url + "/api/docs/assets/..%2Fconsts.py",
                        headers=ui_server.headers)
    assert missing.status_code == 404
