"""Secrets in what a try reports are *** before they are stored: a task that raises with its
connection's password in the message, a failure callback and a DAG callback that do too, and a
template that renders it. Nothing in the database holds the password in clear (the connection's
is encrypted), and the task-instance API, its history, the grid, the rendered fields and the UI
page show ***. Validation errors (422) do not echo the rejected value, so neither does the audit
log. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.fernet import MultiFernet
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from statewright.api import create_app
from statewright.config import load_settings
from statewright.db.tables import metadata
from statewright.sdk import DAG, BaseHook, masking, task
from statewright.sdk.connection import Connection
from statewright.sdk.operators.bash import BashOperator
from statewright.services.secrets.admin import SecretsAdmin

PASSWORD = "s3cret-Pa55word-for-the-warehouse"


def _fail_with_password(context: Any) -> None:
    raise RuntimeError(f"alerting failed: {BaseHook.get_connection('warehouse').password}")


def _dag_callback(context: Any) -> None:
    raise RuntimeError(f"dag callback saw {BaseHook.get_connection('warehouse').password}")


def _run_leaky_dag(engine: Engine, cipher: MultiFernet, tmp_path: Path) -> str:
    SecretsAdmin(engine, lambda: cipher).add_connection(Connection(
        conn_id="warehouse", uri=f"postgresql://etl:{PASSWORD}@wh.example.org:5432/dw"))
    with DAG("leaky", schedule=None, on_failure_callback=_dag_callback) as dag:
        @task(on_failure_callback=_fail_with_password)
        def connect() -> None:
            password = BaseHook.get_connection("warehouse").password
            raise ConnectionError(f"could not log in as etl with password {password}")

        # (No XCom: values a task returns are stored as given, for downstream tasks, and are
        # masked where shown; see test_dags_with_secrets.)
        BashOperator(task_id="render", bash_command="echo {{ conn.warehouse.password }}",
                     do_xcom_push=False)
        connect()
    result = dag.test(engine=engine, logs_folder=tmp_path / "logs")
    assert result.ti("connect").state.value == "failed"
    masking.reset_masks()  # as in an API server's process, which registered nothing
    return str(result.run_id)


def _every_stored_text(engine: Engine) -> str:
    with engine.connect() as conn:
        return "\n".join(repr(tuple(row)) for table in metadata.sorted_tables
                         for row in conn.execute(select(table)))


def test_a_password_in_an_exception_is_masked_everywhere_it_is_stored_or_shown(
        engine: Engine, cipher: MultiFernet, tmp_path: Path,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    run_id = _run_leaky_dag(engine, cipher, tmp_path)
    stored = _every_stored_text(engine)
    assert PASSWORD not in stored
    assert "could not log in as etl with password ***" in stored
    assert "alerting failed: ***" in stored  # the failure callback's error, in the history
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    base = f"/api/v1/dags/leaky/dagRuns/{run_id}/taskInstances"
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "viewer", "viewer")) as client:
        shown = {url: client.get(url) for url in (
            f"{base}/connect", f"{base}/connect/history", base, "/api/v1/dags/leaky/grid",
            f"{base}/render/renderedFields", f"/api/v1/dags/leaky/dagRuns/{run_id}/history",
            f"/dags/leaky/runs/{run_id}/tasks/connect")}
    for url, res in shown.items():
        assert res.status_code == 200, (url, res.text[:300])
        assert PASSWORD not in res.text, url
    ti = shown[f"{base}/connect"].json()
    assert ti["state_message"] == "ConnectionError: could not log in as etl with password ***"
    rendered = shown[f"{base}/render/renderedFields"].text
    assert "echo ***" in rendered


def test_a_validation_error_does_not_echo_the_rejected_value_nor_does_the_audit_log(
        engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]) -> None:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as client:
        res = client.post("/api/v1/connections", json={
            "connection_id": "c1", "conn_type": "postgres", "port": PASSWORD,
            "password": PASSWORD})
        assert res.status_code == 422, res.text
        assert "body field 'port'" in res.json()["detail"]
        assert PASSWORD not in res.text
        res = client.post("/api/v1/variables", json={"key": PASSWORD, "value": [PASSWORD]})
        assert res.status_code == 422 and PASSWORD not in res.text
    assert PASSWORD not in _every_stored_text(engine)
