"""Empty tasks (Airflow's EmptyOperator) are set to success by the scheduler itself: no executor,
no process, one try that starts and ends at once, and a history row that says so. The tasks
below them go on in the same pass. A task with an on_execute or on_success callback, outlets, or
a subclass that overrides execute runs as any other."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core import empty_tasks
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG, Asset, EmptyOperator, PythonOperator, chain
from statewright.sdk.loader import load_dag_file
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


class Loud(EmptyOperator):
    def execute(self, context: Any) -> str:
        return "ran"


def _noop(*args: Any) -> None:
    return None


def _trigger(engine: Engine, dag_id: str) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r1")


def _queued_ids(h: Any) -> set[int]:
    return {i for batch in h.executor.queued_log for i in batch}


def test_an_empty_task_succeeds_without_an_executor(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("empty") as dag:
        EmptyOperator(task_id="start") >> PythonOperator(task_id="work", python_callable=_noop)
    h.sync(dag)
    _trigger(engine, "empty")
    h.executor.hold = True
    h.scheduler.run_once(steps=False)  # starts the run
    h.scheduler.run_once(steps=False)  # start: success; work: scheduled and queued
    tis = {t.task_id: t for t in h.tis("empty")}
    start = tis["start"]
    assert start.state == "success" and tis["work"].state == "queued"
    assert _queued_ids(h) == {tis["work"].id}  # the executor never saw the empty task
    assert start.start_date == start.end_date is not None
    assert start.duration == 0 and start.try_number == 1
    assert start.executor is None and start.hostname in (None, "")
    with engine.connect() as conn:
        history = [r for r in transitions_log.for_run(conn, "empty", "r1")
                   if r.task_id == "start"]
    assert [(r.from_state, r.to_state, r.actor, r.message) for r in history] == [
        (None, "none", "user", None),  # created with the run
        ("none", "success", "scheduler", empty_tasks.MESSAGE)]
    h.executor.finish()
    h.loop()
    assert h.runs("empty")[0].state == "success"


def test_a_chain_of_empty_tasks_ends_the_run_in_one_evaluation(harness: Callable,
                                                               engine: Engine) -> None:
    h = harness(NOW)
    with DAG("chain") as dag:
        chain(*[EmptyOperator(task_id=f"c{i}") for i in range(5)])
    h.sync(dag)
    _trigger(engine, "chain")
    h.scheduler.run_once(steps=False)  # starts the run
    h.scheduler.run_once(steps=False)  # every link, and the run's state
    assert {t.task_id: t.state for t in h.tis("chain")} == {f"c{i}": "success"
                                                            for i in range(5)}
    assert h.runs("chain")[0].state == "success"
    assert h.executor.queued_log == []


@pytest.mark.parametrize("kwargs", [
    {"on_execute_callback": _noop},
    {"on_success_callback": _noop},
    {"outlets": [Asset("s3://bucket/out")]},
    {"cls": Loud},
])
def test_what_a_try_would_do_makes_an_empty_task_run(harness: Callable, engine: Engine,
                                                     kwargs: dict[str, Any]) -> None:
    h = harness(NOW)
    kwargs = dict(kwargs)
    cls = kwargs.pop("cls", EmptyOperator)
    with DAG("runs") as dag:
        cls(task_id="t", **kwargs)
    h.sync(dag)
    _trigger(engine, "runs")
    h.loop()
    (ti,) = h.tis("runs")
    assert ti.state == "success"
    assert _queued_ids(h) == {ti.id}  # through the executor
    with engine.connect() as conn:
        actors = {(r.to_state, r.actor) for r in transitions_log.for_run(conn, "runs", "r1")
                  if r.task_id == "t"}
    assert ("success", "worker") in actors


def test_an_empty_task_downstream_of_a_failure_is_upstream_failed(harness: Callable,
                                                                  engine: Engine) -> None:
    h = harness(NOW)
    with DAG("fails") as dag:
        PythonOperator(task_id="a", python_callable=_noop) >> EmptyOperator(task_id="b")
    h.sync(dag)
    _trigger(engine, "fails")
    h.executor.outcomes["a"] = "failed"
    h.loop()
    assert {t.task_id: t.state for t in h.tis("fails")} == {"a": "failed",
                                                           "b": "upstream_failed"}


AIRFLOW_DAG = '''
from datetime import datetime
from airflow import DAG
from airflow.operators.empty import EmptyOperator
from airflow.providers.standard.operators.empty import EmptyOperator as StandardEmpty

with DAG("af", schedule=None, start_date=datetime(2025, 1, 1)):
    EmptyOperator(task_id="old_path") >> StandardEmpty(task_id="new_path")
'''


def test_airflows_empty_operator_is_set_to_success_by_the_scheduler(
        harness: Callable, engine: Engine, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setattr(sys, "path", list(sys.path))
    path = tmp_path / "af.py"
    path.write_text(textwrap.dedent(AIRFLOW_DAG))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    h = harness(NOW)
    h.sync(loaded.dags["af"])
    _trigger(engine, "af")
    h.loop()
    assert {t.task_id: t.state for t in h.tis("af")} == {"old_path": "success",
                                                        "new_path": "success"}
    assert h.executor.queued_log == []
