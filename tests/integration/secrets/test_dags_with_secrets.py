"""DAGs that use connections and variables: in code and through the worker (the task process
holds no database session), masking in the task's log, an unknown conn_id, Variable.set."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.sdk import DAG, BaseHook, Variable, task
from statewright.sdk.connection import Connection
from statewright.services.secrets.admin import SecretsAdmin

PASSWORD = "hunter2-but-longer"


def _seed(engine: Engine, cipher: MultiFernet) -> SecretsAdmin:
    admin = SecretsAdmin(engine, lambda: cipher)
    admin.add_connection(Connection(conn_id="warehouse", uri=f"postgresql://etl:{PASSWORD}"
                                                             "@wh.example.org:5432/dw"))
    admin.set_variable("threshold", "7")
    admin.set_variable("settings", '{"batch": 50}')
    admin.set_variable("vendor_token", "tok-abcdef-123")
    return admin


def _log_text(logs: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(logs.rglob("*")) if p.is_file())


def test_a_dag_reads_connections_and_variables_and_logs_no_secret(
        engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    admin = _seed(engine, cipher)
    with DAG("uses_secrets", schedule=None) as dag:
        @task
        def read() -> dict[str, object]:
            conn = BaseHook.get_connection("warehouse")
            print(f"connecting with password {conn.password}")
            print("token:", Variable.get("vendor_token"))
            Variable.set("written_by_task", "yes", description="from a task")
            return {"host": conn.host, "threshold": int(Variable.get("threshold")),
                    "batch": Variable.get("settings", deserialize_json=True)["batch"],
                    "default": Variable.get("absent", default="fallback")}

        @task
        def unknown() -> None:
            BaseHook.get_connection("no_such_conn")

        read()
        unknown()
    result = dag.test(engine=engine, logs_folder=tmp_path / "logs")
    assert result.ti("read").state.value == "success"
    assert result.ti("read").return_value == {"host": "wh.example.org", "threshold": 7,
                                              "batch": 50, "default": "fallback"}
    failed = result.ti("unknown")
    assert failed.state.value == "failed" and "no_such_conn" in (failed.state_message or "")
    written = admin.get_variable("written_by_task")
    assert written is not None and (written.val, written.description) == ("yes", "from a task")
    log = _log_text(tmp_path / "logs")
    assert "connecting with password ***" in log and "token: ***" in log
    assert PASSWORD not in log and "tok-abcdef-123" not in log


def test_xcom_is_shown_masked_while_downstream_reads_the_real_value(
        engine: Engine, cipher: MultiFernet, tmp_path: Path,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    from fastapi.testclient import TestClient
    from sqlalchemy import select

    from statewright.api import create_app, reads
    from statewright.config import load_settings
    from statewright.db.tables_secrets import task_instance_mask
    from statewright.sdk import mask_secret, masking

    _seed(engine, cipher)
    own = "registered-by-the-task-42"
    with DAG("shows_values", schedule=None) as dag:
        @task
        def produce() -> dict[str, str]:
            mask_secret(own)
            conn = BaseHook.get_connection("warehouse")
            return {"mine": own, "theirs": f"pw={conn.password}", "api_key": "k-123456",
                    "plain": "hello"}

        @task
        def consume(value: dict[str, str]) -> bool:
            return value["mine"] == own and value["theirs"] == f"pw={PASSWORD}"

        consume(produce())
    result = dag.test(engine=engine, logs_folder=tmp_path / "logs")
    assert result.ti("consume").return_value is True  # the stored value is unchanged
    masking.reset_masks()  # as in a fresh API server process
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "viewer", "viewer")) as client:
        shown = client.get(f"/api/v1/dags/shows_values/dagRuns/{result.run_id}/taskInstances/"
                           "produce/xcomEntries")
    assert shown.status_code == 200, shown.text
    value = shown.json()["xcom_entries"][0]["value"]
    assert value == {"mine": "***", "theirs": "pw=***", "api_key": "***", "plain": "hello"}
    with engine.connect() as conn:
        stored = conn.execute(select(task_instance_mask.c.secrets)).scalars().all()
        # without a key, the values of a task instance with registered secrets are hidden
        # whole; one that registered none shows as stored
        hidden = reads.xcom_entries(conn, "shows_values", result.run_id, "produce", cipher=None)
        plain = reads.xcom_entries(conn, "shows_values", result.run_id, "consume", cipher=None)
    assert stored and all(own not in s and PASSWORD not in s for s in stored)
    assert hidden.xcom_entries[0].value == "***"
    assert plain.xcom_entries[0].value is True


def test_a_task_whose_worker_cannot_decrypt_fails_naming_the_row(
        engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    from statewright.crypto import generate_key, load_fernet
    from statewright.services.worker.deferral import install_cipher

    _seed(engine, cipher)
    with DAG("wrong_key", schedule=None) as dag:
        @task
        def read() -> None:
            BaseHook.get_connection("warehouse")

        read()
    install_cipher(load_fernet(generate_key()))  # the worker's key is not the one used
    result = dag.test(engine=engine, logs_folder=tmp_path / "logs")
    message = result.ti("read").state_message or ""
    assert result.ti("read").state.value == "failed"
    assert re.search(r"connection id \d+ \(warehouse\)", message) and PASSWORD not in message
