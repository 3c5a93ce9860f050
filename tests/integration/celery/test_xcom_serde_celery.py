"""XCom values keep their types under the Celery executor (Redis broker, a real
``statewright celery-worker``), metadata on SQLite and on PostgreSQL: a dataclass of the DAG
file, Decimals and a tuple mapped over cross the worker's task processes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from test_celery_executor import BROKERS, Deployment, _deploy, _reachable, _run, _trigger, _wait

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core"))
from test_xcom_serde_runs import EXECUTOR_DAG, check_executor_run


@pytest.fixture
def deployment(engine: Engine, tmp_path: Path) -> Iterator[Deployment]:
    _reachable(BROKERS["redis"])
    yield from _deploy(engine, BROKERS["redis"], tmp_path, EXECUTOR_DAG)


def test_values_keep_their_types_across_celery_workers(deployment: Deployment) -> None:
    d = deployment
    d.start_worker()
    run_id = _trigger(d.engine, "xcom_types_executor")
    _wait(lambda: _run(d.engine, "xcom_types_executor", run_id).state in ("success", "failed"),
          120, "the xcom_types_executor run", d)
    check_executor_run(d.engine, _run(d.engine, "xcom_types_executor", run_id).id)
