"""DAG versions over the REST API and the CLI: the list, one version's structure, its source
code, the grid's version marks, the code view page, and ``db clean``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from tests.cli_helpers import cli_uses_engine

from statewright.core.states import RUN
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dag_versions, db_clean
from statewright.db.tables import dag_run
from statewright.sdk import DAG, EmptyOperator
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_runs import trigger_dag

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def shape(*task_ids: str) -> dict[str, Any]:
    with DAG("shop") as dag:
        for t in task_ids:
            EmptyOperator(task_id=t)
    return dag.serialize()


def sync(engine: Engine, path: Path, source: str, ser: dict[str, Any], now: datetime) -> None:
    path.write_text(source)
    with transaction(engine) as conn:
        FileSync(conn, now=now, folder_prefix=str(path.parent) + "/", present_files={str(path)},
                 paused_at_creation=False).file(
            str(path), ImportOutcome(str(path), dags=[{**ser, "fileloc": str(path)}]),
            mtime=0.0, size=0, content_hash=None)


def trigger(engine: Engine, run_id: str, now: datetime) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, "shop", now=now, actor=Actor.USER, run_id=run_id)


def two_versions(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "shop.py"
    sync(engine, path, "# v1 <script>alert(1)</script>\n", shape("load", "old"), T0)
    trigger(engine, "r1", T0)
    trigger(engine, "r2", T0 + timedelta(minutes=1))
    sync(engine, path, "# v2 & more\n", shape("load", "new"), T0 + timedelta(minutes=2))
    trigger(engine, "r3", T0 + timedelta(minutes=3))


def test_versions_structure_and_source(client: TestClient, engine: Engine,
                                       tmp_path: Path) -> None:
    two_versions(engine, tmp_path)
    listed = client.get("/api/v1/dags/shop/dagVersions").json()
    assert [v["version_number"] for v in listed["dag_versions"]] == [1, 2]
    assert listed["dag_versions"][0]["version_name"] == "v1"
    v1 = client.get("/api/v1/dags/shop/dagVersions/1").json()
    assert [t["task_id"] for t in v1["tasks"]] == ["load", "old"]
    src = client.get("/api/v1/dags/shop/dagVersions/1/source").json()
    assert src["content"].startswith("# v1") and src["version_number"] == 1
    latest = client.get("/api/v1/dagSources/shop").json()
    assert latest["version_number"] == 2 and latest["content"] == "# v2 & more\n"
    assert client.get("/api/v1/dagSources/shop?version_number=1").json()["content"] \
        .startswith("# v1")


def test_unknown_versions_and_dags_are_404_with_a_hint(client: TestClient, engine: Engine,
                                                       tmp_path: Path) -> None:
    two_versions(engine, tmp_path)
    r = client.get("/api/v1/dags/shop/dagVersions/9")
    assert r.status_code == 404 and "no version 9" in r.json()["detail"]
    assert client.get("/api/v1/dags/nope/dagVersions").status_code == 404
    assert client.get("/api/v1/dags/shop/dagVersions/0").status_code == 422


def test_the_grid_marks_where_the_version_changes(client: TestClient, engine: Engine,
                                                  tmp_path: Path) -> None:
    two_versions(engine, tmp_path)
    grid = client.get("/api/v1/dags/shop/grid").json()
    runs = {r["dag_run_id"]: r for r in grid["dag_runs"]}
    assert [runs[k]["dag_version_number"] for k in ("r1", "r2", "r3")] == [1, 1, 2]
    assert [runs[k]["version_changed"] for k in ("r1", "r2", "r3")] == [False, False, True]
    # a page starting after the change still knows the run before it
    page = client.get("/api/v1/dags/shop/grid?limit=1").json()
    assert page["dag_runs"][0]["dag_run_id"] == "r3" and page["dag_runs"][0]["version_changed"]
    rows = {r["task_id"]: r for r in grid["rows"]}
    assert rows["old"]["in_dag"] is False and rows["old"]["version_number"] == 1
    assert rows["new"]["in_dag"] is True and rows["new"]["version_number"] is None


def test_the_code_view_escapes_the_source(client: TestClient, engine: Engine,
                                          tmp_path: Path) -> None:
    two_versions(engine, tmp_path)
    page = client.get("/dags/shop/code?version=1")
    assert page.status_code == 200
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert 'class="highlight"' in page.text and 'id="code-version"' in page.text
    latest = client.get("/dags/shop/code")
    assert "# v2 &amp; more" in latest.text and 'data-version="2"' in latest.text
    assert client.get("/dags/shop/code?version=7").status_code == 404


def test_cli_dags_versions(engine: Engine, tmp_path: Path, cli_run: Any,
                           monkeypatch: Any) -> None:
    two_versions(engine, tmp_path)
    cli_uses_engine(monkeypatch, engine)
    env = {"STATEWRIGHT_HOME": str(tmp_path / "home"),
           "STATEWRIGHT_DATABASE_URL": "sqlite:///unused",
           "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "nodags")}
    out = cli_run(env, "dags", "versions", "shop", "-o", "json")
    assert out.exit_code == 0, out.output
    assert [v["version_number"] for v in json.loads(out.output)] == [1, 2]
    bad = cli_run(env, "dags", "versions", "nope")
    assert bad.exit_code != 0 and "No DAG with id 'nope'" in bad.output


def test_db_clean_prunes_versions_only_with_their_runs(engine: Engine, tmp_path: Path) -> None:
    two_versions(engine, tmp_path)
    with transaction(engine) as conn:
        for run_id in ("r1", "r2"):
            pk = conn.execute(select(dag_run.c.id).where(dag_run.c.run_id == run_id)
                              ).scalar_one()
            door.set_dag_run_state(conn, pk, frm=RUN.QUEUED, to=RUN.CANCELLED,
                                   actor=Actor.USER, now=T0)
    with transaction(engine) as conn:
        kept = db_clean.clean(conn, before=T0 + timedelta(seconds=30),
                              terminal_states={"success", "failed", "cancelled"})
    assert (kept.runs, kept.versions) == (1, 0)  # r1 went; r2 still uses version 1
    with transaction(engine) as conn:
        done = db_clean.clean(conn, before=T0 + timedelta(hours=1),
                              terminal_states={"success", "failed", "cancelled"})
    assert (done.runs, done.versions) == (1, 1)  # r2 went, and version 1 with it
    with engine.connect() as conn:
        assert [v.version_number for v in dag_versions.list_versions(conn, "shop")] == [2]


def test_each_try_names_the_version_it_ran(client: TestClient, engine: Engine,
                                           tmp_path: Path) -> None:
    from statewright.core.states import TI
    from statewright.db.repositories import task_instances as ti_repo
    from statewright.db.tables import task_instance

    two_versions(engine, tmp_path)
    with transaction(engine) as conn:
        pk = conn.execute(select(task_instance.c.id).where(
            task_instance.c.run_id == "r1", task_instance.c.task_id == "load")).scalar_one()
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, [pk], frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=T0)
        door.set_task_instance_state(conn, [pk], frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.WORKER, now=T0, increment_try=True)
        door.set_task_instance_state(conn, [pk], frm=TI.RUNNING, to=TI.SUCCESS,
                                     actor=Actor.WORKER, now=T0)
        row = ti_repo.get(conn, pk)
        ti_repo.add_history(conn, [{
            "task_instance_id": pk, "dag_id": "shop", "run_id": "r1", "task_id": "load",
            "map_index": -1, "try_number": 1, "state": "success", "state_name": "Success"}])
    assert row.dag_version_id is not None
    body = client.get("/api/v1/dags/shop/dagRuns/r1/taskInstances/load").json()
    # created under version 1, but its try started after the edit: it ran version 2
    assert [t["dag_version_number"] for t in body["tries"]] == [2]
