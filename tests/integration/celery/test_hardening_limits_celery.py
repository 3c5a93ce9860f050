"""A Celery worker (a real ``statewright celery-worker`` on the real Redis broker) handed a try
whose workload cannot be pickled (a conf 500 lists deep) fails that try with the reason and
frees its process: an ordinary DAG queued with them on the same worker runs to success.
On SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from test_celery_executor import BROKERS, Deployment, _deploy, _reachable, _run, _tis, _wait

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.services.dag_runs import trigger_dag

DAGS = '''
from statewright.sdk import DAG, task

with DAG("celery_victim"):
    @task(queue=QUEUE, retries=2)
    def reads_conf(**context):
        return len(context["dag_run"].conf)

    reads_conf()

with DAG("celery_ordinary"):
    @task(queue=QUEUE)
    def first():
        return 1

    first()
'''


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.fixture
def victims(engine: Engine, tmp_path: Path) -> Iterator[Deployment]:
    _reachable(BROKERS["redis"])
    yield from _deploy(engine, BROKERS["redis"], tmp_path, DAGS)


def _trigger(engine: Engine, dag_id: str, conf: Any = None) -> str:
    with transaction(engine) as conn:
        return trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER, conf=conf)[1]


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_an_unpicklable_workload_fails_on_a_celery_worker_and_frees_its_process(
        victims: Deployment) -> None:
    d = victims
    # No input limit stops the conf first: pickling the workload itself fails.
    d.start_worker(STATEWRIGHT_MAX_INPUT_DEPTH="1000000")
    bad = [_trigger(d.engine, "celery_victim", {"a": deep(500)}) for _ in range(2)]
    good = _trigger(d.engine, "celery_ordinary")

    def finished(dag_id: str, run_id: str) -> bool:
        return _run(d.engine, dag_id, run_id).state in ("success", "failed")

    _wait(lambda: all(finished("celery_victim", r) for r in bad)
          and finished("celery_ordinary", good), 60, "the runs to finish", d)
    assert _run(d.engine, "celery_ordinary", good).state == "success"
    for run_id in bad:
        run = _run(d.engine, "celery_victim", run_id)
        ti = _tis(d.engine, run.id)["reads_conf"]
        assert (run.state, ti.state, ti.try_number) == ("failed", "failed", 1)
        assert "could not be handed to a task process: RecursionError" in ti.state_message
