"""/api/v2's DAG versions and sources, config (hidden by default, secrets masked), jobs,
plugins, providers, DAG stats, tags and warnings, one import error and one event log, on SQLite
and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from api_helpers import add_runs, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from test_api_dag_versions import sync

from statewright.api import create_app
from statewright.config import Settings, load_settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import import_errors
from statewright.db.repositories import jobs as job_repo
from statewright.sdk import DAG, EmptyOperator

V2 = "/api/v2"


def _dag(engine: Engine, folder: Path) -> None:
    with DAG("versioned", tags=["team-a", "nightly"], dag_display_name="Versioned") as dag:
        EmptyOperator(task_id="only")
    ser = dag.serialize()
    sync(engine, folder / "versioned.py", "# the DAG's file\n", ser, utcnow())
    add_runs(engine, ser, ["r1", "r2"])


def test_dag_versions_and_source(client: TestClient, engine: Engine, tmp_path: Path) -> None:
    _dag(engine, tmp_path)
    listed = client.get(f"{V2}/dags/versioned/dagVersions").json()
    assert listed["total_entries"] == 1
    [v] = listed["dag_versions"]
    assert (v["version_number"], v["dag_id"], v["dag_display_name"]) == (1, "versioned",
                                                                         "Versioned")
    assert client.get(f"{V2}/dags/versioned/dagVersions/1").json()["id"] == v["id"]
    assert client.get(f"{V2}/dags/versioned/dagVersions/9").status_code == 404
    assert client.get(f"{V2}/dags/nope/dagVersions").status_code == 404
    assert client.get(f"{V2}/dags/versioned/dagVersions",
                      params={"order_by": "dag_id"}).status_code == 400
    source = client.get(f"{V2}/dagSources/versioned").json()
    assert source["version_number"] == 1 and source["dag_display_name"] == "Versioned"
    text = client.get(f"{V2}/dagSources/versioned", headers={"Accept": "text/plain"})
    assert text.headers["content-type"].startswith("text/plain")
    assert text.text == source["content"] == "# the DAG's file\n"
    assert client.get(f"{V2}/dagSources/versioned",
                      headers={"Accept": "application/xml"}).status_code == 406


@pytest.fixture
def exposed(engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]
            ) -> Iterator[TestClient]:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "exposed"),
                              "STATEWRIGHT_EXPOSE_CONFIG": "non-sensitive-only",
                              "STATEWRIGHT_FERNET_KEY": "a-fernet-key-to-hide"})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        yield c


def test_config_is_hidden_by_default_and_masks_secrets(
        client: TestClient, exposed: TestClient, engine: Engine,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    refused = client.get(f"{V2}/config")
    assert refused.status_code == 403 and "STATEWRIGHT_EXPOSE_CONFIG" in refused.json()["detail"]
    sections = {s["name"]: {o["key"]: o["value"] for o in s["options"]}
                for s in exposed.get(f"{V2}/config").json()["sections"]}
    assert sections["core"]["fernet_key"] == "< hidden >"
    assert sections["database"]["database_url"] == "< hidden >"
    assert sections["core"]["parallelism"] == "8"
    one = exposed.get(f"{V2}/config/section/core/option/parallelism").json()
    assert one == {"sections": [{"name": "core", "options": [
        {"key": "parallelism", "value": "8"}]}]}
    assert exposed.get(f"{V2}/config/section/core/option/nope").status_code == 404
    assert exposed.get(f"{V2}/config", params={"section": "nope"}).status_code == 404
    text = exposed.get(f"{V2}/config", params={"section": "core"},
                       headers={"Accept": "text/plain"}).text
    assert text.startswith("[core]\n") and "parallelism = 8\n" in text
    assert "a-fernet-key-to-hide" not in text
    viewer = auth_headers(engine, "viewer", "viewer")
    assert exposed.get(f"{V2}/config", headers=viewer).status_code == 403


def test_jobs_plugins_providers(client: TestClient, engine: Engine) -> None:
    now = utcnow()
    with transaction(engine) as conn:
        job_repo.register(conn, job_type="scheduler", hostname="host-a", pid=1, capacity=None,
                         now=now)
        job_repo.register(conn, job_type="triggerer", hostname="host-b", pid=2, capacity=10,
                         now=now)
    jobs = client.get(f"{V2}/jobs", params={"order_by": "-hostname"}).json()
    assert [(j["job_type"], j["hostname"], j["state"]) for j in jobs["jobs"]] == [
        ("TriggererJob", "host-b", "running"), ("SchedulerJob", "host-a", "running")]
    only = client.get(f"{V2}/jobs", params={"job_type": "SchedulerJob"}).json()
    assert [j["hostname"] for j in only["jobs"]] == ["host-a"]
    assert client.get(f"{V2}/jobs", params={"is_alive": "true", "job_state": "success"}
                      ).json()["total_entries"] == 0
    # a time without a zone is UTC (as in Airflow), never a 500
    since = client.get(f"{V2}/jobs", params={"start_date_gte": "2000-01-01T00:00:00"})
    assert since.status_code == 200 and since.json()["total_entries"] == 2
    assert client.get(f"{V2}/jobs", params={"end_date_lt": "2000-01-01T00:00:00"}
                      ).json()["total_entries"] == 0
    assert client.get(f"{V2}/jobs", params={"start_date_gte": "yesterday"}).status_code in (
        400, 422)
    plugins = client.get(f"{V2}/plugins").json()
    assert plugins["total_entries"] == len(plugins["plugins"])
    assert client.get(f"{V2}/plugins/importErrors").status_code == 200
    providers = {p["package_name"] for p in client.get(f"{V2}/providers").json()["providers"]}
    assert {"apache-airflow-providers-postgres",
            "apache-airflow-providers-common-sql"} <= providers


def test_dag_stats_tags_warnings(client: TestClient, engine: Engine, tmp_path: Path) -> None:
    _dag(engine, tmp_path)
    stats = client.get(f"{V2}/dagStats", params={"dag_ids": "versioned"}).json()
    [dag] = stats["dags"]
    counts = {s["state"]: s["count"] for s in dag["stats"]}
    assert set(counts) == {"queued", "running", "success", "failed"}
    assert sum(counts.values()) == 2
    tags = client.get(f"{V2}/dagTags").json()
    assert tags == {"tags": ["nightly", "team-a"], "total_entries": 2}
    assert client.get(f"{V2}/dagTags", params={"tag_name_pattern": "TEAM",
                                               "order_by": "-name"}).json()["tags"] == ["team-a"]
    assert client.get(f"{V2}/dagWarnings").json() == {"dag_warnings": [], "total_entries": 0}


def test_one_import_error_and_one_event_log(client: TestClient, engine: Engine) -> None:
    with transaction(engine) as conn:
        import_errors.record(conn, "/dags/broken.py", "SyntaxError", utcnow())
    [err] = client.get(f"{V2}/importErrors").json()["import_errors"]
    got = client.get(f"{V2}/importErrors/{err['import_error_id']}").json()
    assert (got["filename"], got["stack_trace"]) == ("/dags/broken.py", "SyntaxError")
    missing = client.get(f"{V2}/importErrors/999999")
    assert missing.status_code == 404 and "999999" in missing.json()["detail"]

    for name in ("p_one", "p_two"):
        client.post(f"{V2}/pools", json={"name": name, "slots": 1})
    client.delete(f"{V2}/pools/p_one")
    logs = client.get(f"{V2}/eventLogs", params={"event_pattern": "pool",
                                                 "order_by": "-when"}).json()
    assert [e["event"] for e in logs["event_logs"]] == ["delete_pool", "post_pool", "post_pool"]
    first = logs["event_logs"][-1]
    assert client.get(f"{V2}/eventLogs/{first['event_log_id']}").json() == first
    assert client.get(f"{V2}/eventLogs/999999").status_code == 404
    # beyond the id column's range: refused, never a database error (PostgreSQL's integer)
    assert client.get(f"{V2}/eventLogs/{2**31}").status_code in (400, 422)
    assert client.get(f"{V2}/importErrors/{2**31}").status_code in (400, 422)
    kept = client.get(f"{V2}/eventLogs", params={"excluded_events": "post_pool",
                                                 "event_prefix_pattern": "delete"}).json()
    assert [e["event"] for e in kept["event_logs"]] == ["delete_pool"]
    refused = client.get(f"{V2}/eventLogs", params={"task_id": "x"})
    assert refused.status_code == 400 and "task_id" in refused.json()["detail"]


def test_settings_refuse_an_unknown_expose_config(tmp_path: Path) -> None:
    from statewright.config import ConfigurationError

    with pytest.raises(ConfigurationError, match="STATEWRIGHT_EXPOSE_CONFIG"):
        load_settings({"STATEWRIGHT_HOME": str(tmp_path), "STATEWRIGHT_EXPOSE_CONFIG": "yes"})


def test_settings_default_hides_config(settings: Settings) -> None:
    assert settings.expose_config == "false"


def test_backfill_dry_run_and_order(client: TestClient, engine: Engine) -> None:
    with DAG("daily", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        EmptyOperator(task_id="load")
    store_dag(engine, dag)
    body = {"dag_id": "daily", "from_date": "2026-01-01T00:00:00Z",
            "to_date": "2026-01-03T00:00:00Z"}
    dry = client.post(f"{V2}/backfills/dry_run", json=body).json()
    assert [d["logical_date"][:10] for d in dry["backfills"]] == [
        "2026-01-01", "2026-01-02", "2026-01-03"]
    assert client.get(f"{V2}/backfills", params={"dag_id": "daily"}).json()[
        "total_entries"] == 0  # a dry run changes nothing
    first = client.post(f"{V2}/backfills", json=body).json()["id"]
    client.put(f"{V2}/backfills/{first}/cancel")
    second = client.post(f"{V2}/backfills", json={**body, "to_date": "2026-01-02T00:00:00Z"}
                         ).json()["id"]
    ids = [b["id"] for b in client.get(f"{V2}/backfills", params={
        "dag_id": "daily", "order_by": "-id"}).json()["backfills"]]
    assert ids == [second, first]
    assert client.get(f"{V2}/backfills", params={"dag_id": "daily", "order_by": "dag_id"}
                      ).status_code == 400
