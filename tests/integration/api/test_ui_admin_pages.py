"""The operator pages (backfills, pools, triggers) are served with their data embedded, behind
a login; a viewer reads them without the forms that change things."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.db.engine import transaction
from statewright.db.repositories import pools as pool_repo

PAGES = ["/backfills", "/pools", "/triggers"]


def _embedded(html: str) -> object:
    m = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


@pytest.mark.parametrize("page", PAGES)
def test_operator_pages_need_a_login(anonymous: TestClient, page: str) -> None:
    res = anonymous.get(page, follow_redirects=False)
    assert res.status_code == 303 and res.headers["location"].startswith("/login?next=")


def test_pages_embed_what_the_api_answers(client: TestClient, engine: Engine) -> None:
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "</script><b>x</b>", 2, description="<i>d</i>")
    pools = client.get("/pools")
    assert pools.status_code == 200 and "/static/admin_pages.js" in pools.text
    data = _embedded(pools.text)
    assert isinstance(data, dict)
    assert {p["name"] for p in data["pools"]} == {"</script><b>x</b>", "default_pool"}
    assert "</script><b>x</b>" not in pools.text  # embedded escaped, drawn as text
    assert 'id="pool-form"' in pools.text
    backfills = _embedded(client.get("/backfills").text)
    assert isinstance(backfills, dict) and backfills["backfills"]["total_entries"] == 0
    triggers = _embedded(client.get("/triggers").text)
    assert isinstance(triggers, dict) and set(triggers) == {"jobs", "triggers"}
    for page in PAGES:
        assert f'href="{page}"' in client.get("/").text  # in the navigation


def test_a_viewer_sees_the_pools_without_the_form(client: TestClient, engine: Engine,
                                                  auth_headers: Callable[..., dict[str, str]]
                                                  ) -> None:
    viewer = auth_headers(engine, "vi", "viewer")
    res = client.get("/pools", headers=viewer)
    assert res.status_code == 200 and 'id="pool-form"' not in res.text
