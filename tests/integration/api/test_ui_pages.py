"""The web UI's pages are served with their data embedded; unknown ones answer 404."""

from __future__ import annotations

import json
import re

from api_helpers import q
from fastapi.testclient import TestClient


def _embedded(html: str) -> object:
    m = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


def test_dag_list_page(client: TestClient, failed_run: tuple[str, str]) -> None:
    res = client.get("/")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/html")
    data = _embedded(res.text)
    assert isinstance(data, dict) and [d["dag_id"] for d in data["dags"]] == ["etl"]
    assert 'id="trigger-dialog"' in res.text and "/static/app.js" in res.text


def test_dag_page_embeds_the_grid(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    res = client.get(f"/dags/{dag_id}", params={"run_id": run_id, "task_id": "extract"})
    assert res.status_code == 200
    data = _embedded(res.text)
    assert isinstance(data, dict)
    assert data["grid"]["dag_runs"][0]["dag_run_id"] == run_id
    assert data["open"] == {"run_id": run_id, "task_id": "extract", "map_index": -1}
    assert "a failing pipeline" in res.text


def test_run_and_task_instance_pages(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    run_page = client.get(f"/dags/{dag_id}/runs/{q(run_id)}")
    assert run_page.status_code == 200
    data = _embedded(run_page.text)
    assert isinstance(data, dict) and data["run"]["state"] == "failed"
    assert {t["task_id"] for t in data["task_instances"]["task_instances"]} == {
        "extract", "load", "cleanup"}
    ti_page = client.get(f"/dags/{dag_id}/runs/{q(run_id)}/tasks/extract")
    assert ti_page.status_code == 200
    ti = _embedded(ti_page.text)
    assert isinstance(ti, dict) and len(ti["ti"]["tries"]) == 2


def test_import_errors_page_escapes_the_traceback(client: TestClient) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import import_errors

    engine = client.app.state.engine  # type: ignore[attr-defined]
    with transaction(engine) as conn:
        import_errors.record(conn, "/dags/x.py", "<script>alert(1)</script>", utcnow())
    res = client.get("/import-errors")
    assert res.status_code == 200
    assert "/dags/x.py" in res.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in res.text
    assert "<script>alert(1)</script>" not in res.text


def test_unknown_pages_are_404(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, _ = failed_run
    for url in ("/dags/nope", f"/dags/{dag_id}/runs/nope", f"/dags/{dag_id}/runs/nope/tasks/x"):
        res = client.get(url)
        assert res.status_code == 404, url
        assert "Not found" in res.text


def test_static_files(client: TestClient) -> None:
    js = client.get("/static/grid_page.js")
    assert js.status_code == 200 and "renderGrid" in js.text
    css = client.get("/static/app.css")
    assert css.status_code == 200 and ".s-failed" in css.text
