"""The extract-check-load DAG of the SQL operators against PostgreSQL and MariaDB under the
Celery executor (Redis broker, a real ``statewright celery-worker``), metadata on SQLite and on
PostgreSQL: the worker's task processes read the connections through their worker."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from test_celery_executor import (
    BROKERS,
    FERNET_KEY,
    Deployment,
    _deploy,
    _reachable,
    _trigger,
    _wait,
)

from statewright.crypto import load_fernet
from statewright.db.repositories import runs as run_repo
from statewright.sdk import secrets
from statewright.services.worker.deferral import install_cipher, installed_cipher

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "secrets"))
from sql_dag import check_outcome, dag_text, seed_targets


@pytest.fixture
def sql_deployment(engine: Engine, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Deployment, str]]:
    _reachable(BROKERS["redis"])
    monkeypatch.setenv("STATEWRIGHT_FERNET_KEY", FERNET_KEY)  # the DAG processor's key too
    before = installed_cipher()
    cipher = load_fernet(FERNET_KEY)  # the workers' key
    install_cipher(cipher)
    suffix = seed_targets(engine, cipher)
    text = dag_text(suffix, defaults="{'queue': QUEUE}")  # QUEUE: the deployment's queue
    try:
        yield from ((d, suffix) for d in _deploy(engine, BROKERS["redis"], tmp_path, text))
    finally:
        install_cipher(before)
        secrets.clear_cache()


def test_extract_check_load_runs_under_the_celery_executor(
        sql_deployment: tuple[Deployment, str]) -> None:
    d, suffix = sql_deployment
    d.start_worker()
    run_id = _trigger(d.engine, "sql_ecl")

    def finished() -> bool:
        with d.engine.connect() as conn:
            return run_repo.get_by_run_id(conn, "sql_ecl", run_id).state in ("success",
                                                                              "failed")

    _wait(finished, 120, "the sql_ecl run", d)
    with d.engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, "sql_ecl", run_id)
    check_outcome(d.engine, run, suffix)
