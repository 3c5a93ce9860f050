"""The web UI's static files: a page names each by its content's version, that address is kept
by the browser for good (``immutable``), any other is asked again with its ETag (a 304 when
unchanged), and a changed file gets a new address."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from fastapi.testclient import TestClient

from statewright.api.ui.static_assets import IMMUTABLE, REVALIDATE, STATIC_DIR, version_of

ASSET = re.compile(r'(?:src|href)="https?://[^/"]+(/static/[^"]+)"')


def test_every_static_file_of_a_page_is_named_by_its_version(anonymous: TestClient) -> None:
    page = anonymous.get("/login")
    assert page.status_code == 200
    urls = ASSET.findall(page.text)
    assert len(urls) >= 5  # theme, styles and the scripts of every page
    for url in urls:
        path, _, query = url.partition("?")
        content = (STATIC_DIR / path.removeprefix("/static/")).read_bytes()
        assert query == "v=" + hashlib.sha256(content).hexdigest()[:16], url
        res = anonymous.get(url)
        assert res.status_code == 200 and res.content == content
        assert res.headers["cache-control"] == IMMUTABLE


def test_an_address_without_the_current_version_is_asked_again(anonymous: TestClient) -> None:
    for url in ("/static/app.js", "/static/app.js?v=0123456789abcdef"):
        res = anonymous.get(url)
        assert res.status_code == 200
        assert res.headers["cache-control"] == REVALIDATE
        again = anonymous.get(url, headers={"If-None-Match": res.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["cache-control"] == REVALIDATE
    assert anonymous.get("/static/no-such-file.js?v=1").status_code == 404


def test_a_changed_file_gets_a_new_version(tmp_path: Path) -> None:
    script = tmp_path / "view.js"
    script.write_text("let a = 1;\n")
    first = version_of(script)
    assert first == version_of(script)
    script.write_text("let a = 22;\n")
    os.utime(script, ns=(1, 1))  # whatever its time: the size differs
    assert version_of(script) not in (None, first)
    assert version_of(tmp_path / "gone.js") is None
