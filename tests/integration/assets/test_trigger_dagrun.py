"""TriggerDagRunOperator: a run of another DAG created by the try's worker, conf and logical
date, waiting through the triggerer (allowed / failed states), reset on clear; a loop refused."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.errors import DagDefinitionError
from statewright.crypto import generate_key, load_fernet
from statewright.sdk import DAG, task
from statewright.sdk.operators import TriggerDagRunOperator
from statewright.services.controls.clear import clear_task_instances
from statewright.services.triggerer import TriggererConfig, TriggererJob
from statewright.services.worker.deferral import install_cipher

SEEN: list[Any] = []


def target(dag_id: str = "target", fail: bool = False) -> DAG:
    with DAG(dag_id, schedule=None) as dag:
        @task
        def work(dag_run: Any = None) -> None:
            SEEN.append((dag_run.conf, dag_run.logical_date))
            if fail:
                raise RuntimeError("target failed")
        work()
    return dag


def trigger(dag_id: str = "controller", **kwargs: Any) -> DAG:
    with DAG(dag_id, schedule=None) as dag:
        TriggerDagRunOperator(task_id="trigger", trigger_dag_id="target", **kwargs)
    return dag


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    SEEN.clear()
    yield
    SEEN.clear()


def test_the_target_run_is_created_with_conf_and_logical_date(assets_harness: Callable) -> None:
    h = assets_harness()
    when = datetime(2025, 6, 1, tzinfo=UTC)
    h.sync(target(), trigger(conf={"k": "v"}, logical_date=when, trigger_run_id="from_ctl"))
    h.trigger("controller")
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "success"
    (run,) = h.runs("target")
    assert (run.run_id, run.run_type, run.conf, run.logical_date) == (
        "from_ctl", "manual", {"k": "v"}, when)
    assert run.state == "success" and SEEN == [({"k": "v"}, when)]


def test_a_missing_target_fails_the_try_with_the_reason(assets_harness: Callable) -> None:
    h = assets_harness()
    h.sync(trigger())
    h.trigger("controller")
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "failed" and "No DAG with id 'target'" in (ti.state_message or "")


def test_a_dag_triggering_itself_is_refused() -> None:
    with pytest.raises(DagDefinitionError, match="would trigger its own DAG 'loop'"):
        with DAG("loop", schedule=None):
            TriggerDagRunOperator(task_id="again", trigger_dag_id="loop")


def test_a_self_trigger_set_later_is_refused_at_run_time(assets_harness: Callable) -> None:
    h = assets_harness()
    dag = trigger("controller")
    dag.get_task("trigger").trigger_dag_id = "controller"  # e.g. rendered from a template
    h.sync(dag)
    h.trigger("controller")
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "failed" and "would trigger its own DAG" in (ti.state_message or "")
    assert len(h.runs("controller")) == 1


def test_another_run_at_the_same_logical_date_fails_even_with_reset(
        assets_harness: Callable, engine: Engine) -> None:
    """One run per logical date; as in Airflow, reset_dag_run clears a run of the same id only."""
    h = assets_harness()
    when = datetime(2025, 6, 1, tzinfo=UTC)
    h.sync(target(), trigger(logical_date=when, trigger_run_id="first"))
    ctl = h.trigger("controller")
    h.loop()
    for reset in (False, True):
        h.sync(target(), trigger(logical_date=when, trigger_run_id="second",
                                 reset_dag_run=reset))
        clear_task_instances(engine, ctl, dag_id="controller", now=h.clock())
        h.loop()
        (ti,) = h.tis("controller")
        assert ti.state == "failed"
        assert ("already has a run 'first' at logical date 2025-06-01T00:00:00+00:00" in
                (ti.state_message or ""))
        assert [(r.run_id, r.clear_number) for r in h.runs("target")] == [("first", 0)]


def test_by_default_the_run_id_follows_the_logical_date_so_reset_clears_the_run(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    when = datetime(2025, 6, 1, tzinfo=UTC)
    h.sync(target(), trigger(logical_date=when, reset_dag_run=True))
    ctl = h.trigger("controller")
    h.loop()
    clear_task_instances(engine, ctl, dag_id="controller", now=h.clock())
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "success"
    (run,) = h.runs("target")
    assert (run.run_id, run.clear_number, run.state) == (
        "manual__2025-06-01T00:00:00+00:00", 1, "success")


def test_an_existing_run_id_fails_unless_reset_and_reset_clears_it(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    h.sync(target(), trigger(trigger_run_id="fixed"))
    ctl = h.trigger("controller")
    h.loop()
    assert [r.state for r in h.runs("target")] == ["success"]
    clear_task_instances(engine, ctl, dag_id="controller", now=h.clock())
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "failed" and "already has a run 'fixed'" in (ti.state_message or "")

    h.sync(target(), trigger(trigger_run_id="fixed", reset_dag_run=True))
    clear_task_instances(engine, ctl, dag_id="controller", now=h.clock())
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "success"
    (run,) = h.runs("target")
    assert run.clear_number == 1 and run.state == "success" and len(SEEN) == 2


@pytest.fixture
def triggerer(engine: Engine) -> Iterator[TriggererJob]:
    cipher = load_fernet(generate_key())
    install_cipher(cipher)
    job = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=0.05))
    job.start()
    yield job
    job.stop()
    install_cipher(None)


def _run_until_done(h: Any, job: TriggererJob, dag_id: str, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        h.loop()
        job.run_once()
        (ti,) = h.tis(dag_id)
        if ti.state in ("success", "failed"):
            return ti
        time.sleep(0.05)
    raise AssertionError(f"{dag_id} did not finish")


@pytest.mark.parametrize("fail", [False, True])
def test_wait_for_completion_defers_until_the_target_ends(
        assets_harness: Callable, triggerer: TriggererJob, fail: bool) -> None:
    h = assets_harness()
    h.sync(target(fail=fail), trigger(wait_for_completion=True, poke_interval=0.05))
    h.trigger("controller")
    h.loop()
    # the target ran meanwhile; the controller waits in the triggerer, holding no worker slot
    assert [t.state for t in h.tis("controller")] == ["deferred"]
    assert [r.state for r in h.runs("target")] == ["failed" if fail else "success"]
    ti = _run_until_done(h, triggerer, "controller")
    assert ti.state == ("failed" if fail else "success")
    if fail:
        assert "failed with failed state(s) ['failed']" in (ti.state_message or "")


def test_a_loop_through_two_dags_is_refused(assets_harness: Callable) -> None:
    h = assets_harness()
    with DAG("ping", schedule=None) as ping:
        TriggerDagRunOperator(task_id="to_pong", trigger_dag_id="pong")
    with DAG("pong", schedule=None) as pong:
        TriggerDagRunOperator(task_id="to_ping", trigger_dag_id="ping")
    h.sync(ping, pong)
    h.trigger("ping")
    h.loop()
    assert len(h.runs("ping")) == 1 and len(h.runs("pong")) == 1
    (to_ping,) = h.tis("pong")
    assert to_ping.state == "failed"
    assert "loop of DAGs that trigger each other (ping -> pong -> ping)" in (
        to_ping.state_message or "")
