"""Choosing the Celery executor, its worker command's options, and a broker that takes nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from statewright.cli.commands.celery import parse_queues
from statewright.cli.main import cli
from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.core.errors import ConfigurationError
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.executors.celery import CeleryExecutor


def test_the_executor_setting() -> None:
    default = load_settings({})
    assert (default.executor, default.celery_broker_url) == ("local",
                                                             "redis://127.0.0.1:6379/0")
    chosen = load_settings({"STATEWRIGHT_EXECUTOR": "Celery",
                            "STATEWRIGHT_CELERY_BROKER_URL": "amqp://guest:guest@h:5672//"})
    assert (chosen.executor, chosen.celery_broker_url) == ("celery",
                                                           "amqp://guest:guest@h:5672//")
    with pytest.raises(ConfigurationError, match="STATEWRIGHT_EXECUTOR='kubernetes'"):
        load_settings({"STATEWRIGHT_EXECUTOR": "kubernetes"})
    with pytest.raises(ConfigurationError, match="VISIBILITY_TIMEOUT"):
        load_settings({"STATEWRIGHT_CELERY_VISIBILITY_TIMEOUT": "0"})


def test_queue_names() -> None:
    assert parse_queues(" default, etl ,default") == ["default", "etl"]
    for bad in ("", " , ", "has space", "a/b"):
        with pytest.raises(click.BadParameter):
            parse_queues(bad)


def test_the_worker_command_refuses_a_bad_queue_before_connecting(tmp_path: Path) -> None:
    env = {"STATEWRIGHT_HOME": str(tmp_path), "STATEWRIGHT_DATABASE_URL": "",
           "STATEWRIGHT_CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}
    result = CliRunner().invoke(cli, ["celery-worker", "--queues", "no good"], env=env)
    assert result.exit_code == 2
    assert "queue name" in result.output


def test_a_broker_that_takes_nothing_sends_the_task_instance_back_to_scheduled(
        engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "one.py").write_text(textwrap.dedent('''
        from statewright.sdk import DAG, EmptyOperator
        with DAG("one"):
            EmptyOperator(task_id="only", queue="etl")
    '''))
    DagProcessor(engine, tmp_path / "dags").run_once()
    now = utcnow()
    with transaction(engine) as conn:
        run_pk, _ = trigger_dag(conn, "one", now=now, actor=Actor.USER)
        ti = ti_repo.get_by_key(conn, run_pk, "only")
        door.set_task_instance_state(conn, ti.id, frm=TI.NONE, to=TI.SCHEDULED,
                                     actor=Actor.SCHEDULER, now=now)
        door.set_task_instance_state(conn, ti.id, frm=TI.SCHEDULED, to=TI.QUEUED,
                                     actor=Actor.SCHEDULER, now=now,
                                     values={"executor": "celery"})
    executor = CeleryExecutor(engine, broker_url="redis://127.0.0.1:1/0", parallelism=3)
    assert executor.slots_available() == 2  # one of three is queued
    try:
        executor.queue_workloads([ti.id])
    finally:
        executor.stop()
    with engine.connect() as conn:
        after = ti_repo.get(conn, ti.id)
    assert (after.state, after.try_number, after.queue) == ("scheduled", 0, "etl")
    assert "Celery broker did not take the message" in after.state_message
    assert executor.sent == 0
    assert executor.slots_available() == 3
