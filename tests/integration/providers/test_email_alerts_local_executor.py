"""A failure alert mail under the real scheduler and local executor (SQLite and PostgreSQL): the
task's process holds no database session, so smtp_default, stored in the database, reaches it
through the worker, as every connection does."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import MultiFernet
from servers import SmtpServer
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.crypto import generate_key, load_fernet
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.sdk import masking, secrets
from statewright.sdk.connection import Connection
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler
from statewright.services.secrets.admin import SecretsAdmin
from statewright.services.worker.deferral import install_cipher, installed_cipher

DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG, task

with DAG("alerting", schedule=None, start_date=datetime(2026, 1, 1),
         default_args={"email": "oncall@example.org"}) as dag:
    @task
    def boom():
        raise RuntimeError("the feed is late")

    boom()
'''


@pytest.fixture
def cipher(monkeypatch: pytest.MonkeyPatch) -> Iterator[MultiFernet]:
    key = generate_key()
    monkeypatch.setenv("STATEWRIGHT_FERNET_KEY", key)
    monkeypatch.delenv("STATEWRIGHT_CONN_SMTP_DEFAULT", raising=False)
    before = installed_cipher()
    c = load_fernet(key)
    install_cipher(c)
    secrets.clear_cache()
    yield c
    install_cipher(before)
    secrets.install_store(None)
    secrets.clear_cache()
    masking.reset_masks()


def _wait_for_run(engine: Engine, run_id: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "alerting", run_id)
        if run.state in ("success", "failed"):
            return run
        time.sleep(0.1)  # the run is carried by other processes: poll its row
    raise AssertionError(f"run {run_id} did not finish in {timeout}s")


def test_a_failure_mail_from_the_local_executor(
        engine: Engine, cipher: MultiFernet, smtpd: SmtpServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    smtpd.clear()
    SecretsAdmin(engine, lambda: cipher).add_connection(Connection(
        conn_id="smtp_default", uri=smtpd.uri(login=True, from_email="alerts@example.org")))
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "alerting.py").write_text(DAG_FILE)
    DagProcessor(engine, tmp_path / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=1, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "alerting", now=utcnow(), actor=Actor.USER)
        run = _wait_for_run(engine, run_id)
        # the task's process mails after its try's outcome is stored: the run can end first
        deadline = time.monotonic() + 60
        while not smtpd.messages and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    assert run.state == "failed"
    [(sender, recipients, message)] = smtpd.messages
    assert (sender, recipients) == ("alerts@example.org", ["oncall@example.org"])
    assert message["Subject"] == f"Airflow alert: <TaskInstance: alerting.boom {run_id} [failed]>"
    body = message.get_payload()[0].get_payload(decode=True).decode()
    assert "RuntimeError: the feed is late" in body
