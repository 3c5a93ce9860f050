"""Deferral and reschedule end to end, through dag.test() (in process) and through the local
executor, scheduler and triggerer (in threads), on SQLite and PostgreSQL."""

from __future__ import annotations

import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select
from tests.sensor_clock import install_sensor_clock

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import reschedules as reschedule_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import trigger
from statewright.sdk import DAG, BaseOperator, task
from statewright.sdk.loader import load_dag_file
from statewright.sdk.sensors import ExternalTaskSensor, PythonSensor
from statewright.sdk.triggers import TimeDeltaTrigger
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.triggerer import TriggererConfig, TriggererJob

LOGICAL = datetime(2026, 5, 1, tzinfo=UTC)


class Twice(BaseOperator):
    """Defers, resumes, defers again from the callback, then succeeds."""

    def execute(self, context: Any) -> Any:
        self.defer(trigger=TimeDeltaTrigger(timedelta(milliseconds=20)), method_name="again",
                   kwargs={"round": 1})

    def again(self, context: Any, event: Any = None, round: int = 0) -> Any:
        if round < 2:
            self.defer(trigger=TimeDeltaTrigger(timedelta(milliseconds=20)),
                       method_name="again", kwargs={"round": round + 1})
        return {"round": round, "try": context["ti"].try_number, "event": event is not None}


class NeverFires(BaseOperator):
    def execute(self, context: Any) -> Any:
        if context["ti"].try_number == 1:
            self.defer(trigger=TimeDeltaTrigger(timedelta(hours=1)), method_name="done",
                       timeout=timedelta(milliseconds=100))
        return "second try"

    def done(self, context: Any, event: Any = None) -> Any:
        return "fired"


class Unstorable(BaseOperator):
    def execute(self, context: Any) -> Any:
        self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=1)), method_name="done",
                   kwargs={"handle": object()})

    def done(self, context: Any, event: Any = None, handle: Any = None) -> Any:
        return None


def _history(engine: Engine, dag_id: str, run_id: str, task_id: str) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        rows = transitions_log.for_run(conn, dag_id, run_id)
    return [(r.from_state, r.to_state, r.try_number) for r in rows if r.task_id == task_id]


def test_defer_resume_and_defer_again_in_one_try(engine: Engine, cipher: MultiFernet) -> None:
    with DAG("twice") as dag:
        Twice(task_id="t")
    res = dag.test(engine=engine)
    assert res.states == {"t": "success"}
    assert res.ti("t").return_value == {"round": 2, "try": 1, "event": True}
    hist = _history(engine, "twice", res.run_id, "t")
    assert [h[1] for h in hist].count("deferred") == 2
    assert {h[2] for h in hist if h[1] == "running"} == {1}  # resumes never start a new try
    with engine.connect() as conn:
        assert conn.execute(select(trigger)).all() == []


def test_a_deferral_timeout_fails_the_try_and_the_retry_starts_afresh(
        engine: Engine, cipher: MultiFernet) -> None:
    with DAG("never") as dag:
        NeverFires(task_id="t", retries=1, retry_delay=0)
    res = dag.test(engine=engine)
    assert res.states == {"t": "success"}
    assert res.ti("t").return_value == "second try" and res.ti("t").try_number == 2
    with engine.connect() as conn:
        (ti,) = ti_repo.by_run(conn, run_repo.get_by_run_id(conn, "never", res.run_id).id)
        first = ti_repo.history_of(conn, ti.id)[0]
    assert first.state == "up_for_retry" and "Trigger timeout" in first.error


def test_unserializable_kwargs_fail_at_defer_time_in_the_task(
        engine: Engine, cipher: MultiFernet) -> None:
    with DAG("unstorable") as dag:
        Unstorable(task_id="t")
    res = dag.test(engine=engine)
    assert res.states == {"t": "failed"}
    assert "cannot be serialized" in res.ti("t").state_message
    assert "'handle'" in res.ti("t").state_message
    with engine.connect() as conn:
        assert conn.execute(select(trigger)).all() == []


def test_a_reschedule_sensor_keeps_its_try_first_poke_and_count(
        engine: Engine, cipher: MultiFernet) -> None:
    pokes: list[int] = []

    def ready(ti: Any) -> bool:
        pokes.append(ti.poke_count)
        return len(pokes) >= 3

    with DAG("resched") as dag:
        PythonSensor(task_id="s", python_callable=ready, mode="reschedule", poke_interval=0.05,
                     retries=2)
    res = dag.test(engine=engine)
    assert res.states == {"s": "success"} and res.ti("s").try_number == 1
    assert pokes == [0, 1, 2]  # the count carried across reschedules
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, "resched", res.run_id)
        (ti,) = ti_repo.by_run(conn, run.id)
        rows = reschedule_repo.for_task_instance(conn, ti.id)
    assert [r.try_number for r in rows] == [1, 1]
    assert ti.first_poke_at is None and ti.poke_count == 0  # cleared once the try ended
    hist = _history(engine, "resched", res.run_id, "s")
    assert [h[1] for h in hist].count("up_for_reschedule") == 2


def test_a_reschedule_sensor_times_out_from_its_first_poke(
        engine: Engine, cipher: MultiFernet, monkeypatch: pytest.MonkeyPatch) -> None:
    with DAG("resched_timeout") as dag:
        PythonSensor(task_id="hard", python_callable=lambda: False, mode="reschedule",
                     poke_interval=60, timeout=300, retries=3)
        PythonSensor(task_id="soft", python_callable=lambda: False, mode="reschedule",
                     poke_interval=60, timeout=300, soft_fail=True)
    # One clock for the sensors and the run's scheduler; it moves only when the run waits for
    # a reschedule to come due, so the pokes' moments do not depend on the machine's speed.
    clock = install_sensor_clock(monkeypatch, utcnow())
    res = dag.test(engine=engine, clock=clock, sleep=clock.sleep)
    assert res.ti("hard").state == "failed" and res.ti("hard").try_number == 1  # no retry
    assert "SensorTimeout" in res.ti("hard").state_message
    assert res.ti("soft").state == "skipped"
    hist = _history(engine, "resched_timeout", res.run_id, "hard")
    # Pokes at 0, 60, 120, 180, 240 and 300 s (+1 ms per wait) are rescheduled; the one at
    # 300.005 s is past the timeout counted from the first poke, not from each pick-up.
    assert [h[1] for h in hist].count("up_for_reschedule") == 5
    assert 300 < sum(clock.sleeps) < 301


def test_external_task_sensor_waits_for_another_dags_task(
        engine: Engine, cipher: MultiFernet) -> None:
    with DAG("upstream_dag") as up:
        @task
        def produce() -> int:
            return 1

        @task
        def broken() -> None:
            raise RuntimeError("no")

        produce()
        broken()
    with DAG("downstream_dag") as down:
        ExternalTaskSensor(task_id="wait", external_dag_id="upstream_dag",
                           external_task_id="produce", poke_interval=0.05)
        ExternalTaskSensor(task_id="wait_run", external_dag_id="upstream_dag",
                           allowed_states=["success"], failed_states=["failed"],
                           poke_interval=0.05)
        ExternalTaskSensor(task_id="wait_broken", external_dag_id="upstream_dag",
                           external_task_id="broken", failed_states=["failed"],
                           soft_fail=True, poke_interval=0.05)
        ExternalTaskSensor(task_id="wait_yesterday", external_dag_id="upstream_dag",
                           external_task_id="produce", poke_interval=0.05,
                           execution_delta=timedelta(days=1), timeout=0.3)
    assert up.test(engine=engine, logical_date=LOGICAL).states == {
        "produce": "success", "broken": "failed"}
    res = down.test(engine=engine, logical_date=LOGICAL)
    assert res.states == {"wait": "success", "wait_run": "failed", "wait_broken": "skipped",
                          "wait_yesterday": "failed"}
    assert "SensorTimeout" in res.ti("wait_yesterday").state_message


DAG_FILE = textwrap.dedent('''
    from datetime import timedelta
    from statewright.sdk import DAG, BaseOperator
    from statewright.sdk.triggers import TimeDeltaTrigger

    class Waiter(BaseOperator):
        def execute(self, context):
            self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=1)), method_name="done")

        def done(self, context, event=None):
            return context["ti"].try_number

    with DAG("waiters"):
        for i in range(4):
            Waiter(task_id=f"w{i}")
''')


def test_deferred_tasks_free_the_worker_and_resume_exactly_once(
        engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    path = tmp_path / "waiters.py"
    path.write_text(DAG_FILE)
    loaded = load_dag_file(path)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, loaded.dags["waiters"].serialize(), now=utcnow())
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=1, views=views)  # one worker slot
    executor.start()
    scheduler = Scheduler(engine, executor, views=views,
                          config=SchedulerConfig(idle_seconds=0.1))
    triggerer = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=0.1))
    stop = threading.Event()
    threads = [threading.Thread(target=scheduler.run_forever, args=(stop,)),
               threading.Thread(target=triggerer.run_forever, args=(stop,))]
    for t in threads:
        t.start()
    try:
        with transaction(engine) as conn:
            run_pk, run_id = trigger_dag(conn, "waiters", now=utcnow(), actor=Actor.USER)
        started = time.monotonic()
        while True:
            with engine.connect() as conn:
                state = run_repo.get(conn, run_pk).state
            if state in ("success", "failed") or time.monotonic() - started > 120:
                break
            time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join(15)
        executor.stop()
    assert state == "success"
    # the four 1 s waits overlapped on one worker slot: every task deferred before any resumed
    # (read from the order of the history, not from the wall clock of a shared machine)
    with engine.connect() as conn:
        rows = transitions_log.for_run(conn, "waiters", run_id)
    deferred = [r.id for r in rows if r.to_state == "deferred"]
    resumed = [r.id for r in rows if r.from_state == "deferred"]
    assert len(deferred) == len(resumed) == 4 and max(deferred) < min(resumed)
    for i in range(4):
        hist = _history(engine, "waiters", run_id, f"w{i}")
        tos = [h[1] for h in hist]
        assert tos.count("deferred") == 1 and tos.count("success") == 1
        assert tos.count("running") == 2 and {h[2] for h in hist if h[1] == "running"} == {1}


@pytest.mark.parametrize("url", ["postgresql://db.example/statewright"])
def test_without_a_key_the_task_fails_and_nothing_is_stored_in_plaintext(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    from statewright.crypto import FernetKeyError
    from statewright.services.worker import deferral

    monkeypatch.setenv("STATEWRIGHT_DATABASE_URL", url)
    monkeypatch.delenv("STATEWRIGHT_FERNET_KEY", raising=False)
    deferral.install_cipher(None)
    with pytest.raises(FernetKeyError, match="STATEWRIGHT_FERNET_KEY is not set"):
        deferral.load_cipher()
    from triggerer_helpers import defer, make_run, ti_row

    (pk,) = make_run(engine).values()
    with pytest.raises(AssertionError):
        defer(engine, [pk], lambda: TimeDeltaTrigger(timedelta(seconds=1)))
    assert ti_row(engine, pk).state == "running"  # the caller applies the failure
    with engine.connect() as conn:
        assert conn.execute(select(trigger)).all() == []
    deferral.install_cipher(None)
