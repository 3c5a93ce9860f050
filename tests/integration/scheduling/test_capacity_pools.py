"""Capacity: pools, priority order, max_active_tasks per run, max_active_tis_per_dag."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import pools as pool_repo
from statewright.db.tables import dag_run as dag_run_table
from statewright.db.tables import job as job_table
from statewright.db.tables import pool, task_instance
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def occupied(engine: Engine, pool_name: str) -> int:
    with engine.connect() as conn:
        return pool_repo.slot_stats(conn)[pool_name].occupied


def trigger(engine: Engine, dag_id: str, run_id: str, now: datetime) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=now, actor=Actor.USER, run_id=run_id)


def test_a_pool_limits_how_many_task_instances_run(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "small", 2, description="two at a time")
    with DAG("pooled") as dag:
        for i in range(5):
            NoopOperator(task_id=f"t{i}", pool="small")
        NoopOperator(task_id="free")  # default_pool: not limited by "small"
    h.sync(dag)
    trigger(engine, "pooled", "r1", h.clock())
    h.executor.hold = True
    most = 0
    for _ in range(10):
        h.loop()
        most = max(most, occupied(engine, "small"))
        assert occupied(engine, "small") <= 2
        h.executor.finish()
    assert most == 2
    assert {t.state for t in h.tis("pooled")} == {"success"}
    first_batch = {t for t in h.executor.queued_log[0]}
    with engine.connect() as conn:
        names = dict(conn.execute(select(task_instance.c.id, task_instance.c.task_id)).all())
    assert "free" in {names[i] for i in first_batch}


def test_pool_slots_and_missing_pools(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "three", 3)
    with DAG("slots") as dag:
        NoopOperator(task_id="big", pool="three", pool_slots=2, priority_weight=10)
        NoopOperator(task_id="small1", pool="three", priority_weight=5)
        NoopOperator(task_id="small2", pool="three", priority_weight=1)
        NoopOperator(task_id="huge", pool="three", pool_slots=4)  # more than the pool has
        NoopOperator(task_id="lost", pool="no_such_pool")
    h.sync(dag)
    trigger(engine, "slots", "r1", h.clock())
    h.executor.hold = True
    h.loop()
    states = {t.task_id: t.state for t in h.tis("slots")}
    assert states["big"] == states["small1"] == "queued"  # 2 + 1 slots
    assert states["small2"] == states["huge"] == states["lost"] == "scheduled"
    assert occupied(engine, "three") == 3
    h.executor.finish()
    h.loop()
    h.executor.finish()
    h.loop()
    states = {t.task_id: t.state for t in h.tis("slots")}
    assert states["small2"] == "success"
    assert states["huge"] == states["lost"] == "scheduled"  # they never fit


def test_priority_weight_orders_the_queue(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("prio") as dag:
        NoopOperator(task_id="low", priority_weight=1, weight_rule="absolute")
        NoopOperator(task_id="high", priority_weight=10, weight_rule="absolute")
        NoopOperator(task_id="mid", priority_weight=5, weight_rule="absolute")
        # downstream rule (the default): its own weight plus every task below it
        a = NoopOperator(task_id="root", priority_weight=2)
        a >> NoopOperator(task_id="leaf", priority_weight=7, weight_rule="absolute")
    h.sync(dag)
    trigger(engine, "prio", "r1", h.clock())
    h.executor.slots = 1
    h.loop()
    with engine.connect() as conn:
        names = dict(conn.execute(select(task_instance.c.id, task_instance.c.task_id)).all())
        weights = dict(conn.execute(select(task_instance.c.task_id,
                                           task_instance.c.priority_weight)).all())
    order = [names[i] for batch in h.executor.queued_log for i in batch]
    assert weights["root"] == 9 and weights["leaf"] == 7
    assert order == ["high", "root", "leaf", "mid", "low"]


def test_summed_weights_are_clamped_to_the_32_bit_column(harness: Callable,
                                                         engine: Engine) -> None:
    """Airflow's db_safe_priority: a chain of heavy tasks sums past 2**31 - 1 under the
    downstream rule; the run is still created, with the weight clamped."""
    h = harness(NOW)
    heavy = 2**30
    with DAG("heavy") as dag:
        first = NoopOperator(task_id="first", priority_weight=heavy)
        second = NoopOperator(task_id="second", priority_weight=heavy)
        third = NoopOperator(task_id="third", priority_weight=heavy)
        first >> second >> third
        low = [NoopOperator(task_id=f"low{i}", priority_weight=-heavy, weight_rule="upstream")
               for i in range(3)]
        low[0] >> low[1] >> low[2]
    h.sync(dag)
    trigger(engine, "heavy", "r1", h.clock())
    with engine.connect() as conn:
        weights = dict(conn.execute(select(task_instance.c.task_id,
                                           task_instance.c.priority_weight)).all())
    assert weights == {"first": 2**31 - 1, "second": 2**31 - 1, "third": heavy,
                       "low0": -heavy, "low1": -(2**31), "low2": -(2**31)}


def test_max_active_tasks_is_per_run_and_max_active_tis_per_dag_per_task(
        harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("limits", max_active_tasks=2, max_active_runs=5) as dag:
        NoopOperator(task_id="one_at_a_time", max_active_tis_per_dag=1)
        for i in range(3):
            NoopOperator(task_id=f"t{i}")
    h.sync(dag)
    trigger(engine, "limits", "r1", h.clock())
    trigger(engine, "limits", "r2", h.clock())
    h.executor.hold = True
    h.loop()
    tis = h.tis("limits")
    queued = [t for t in tis if t.state == "queued"]
    by_run: dict[str, int] = {}
    for t in queued:
        by_run[t.run_id] = by_run.get(t.run_id, 0) + 1
    assert by_run == {"r1": 2, "r2": 2}  # max_active_tasks=2 in each run (Airflow 3)
    assert sum(1 for t in queued if t.task_id == "one_at_a_time") == 1
    for _ in range(6):
        h.executor.finish()
        h.loop()
        running_one = [t for t in h.tis("limits")
                       if t.task_id == "one_at_a_time" and t.state == "queued"]
        assert len(running_one) <= 1
    assert {t.state for t in h.tis("limits")} == {"success"}


def test_paused_dags_do_not_queue_tasks(harness: Callable, engine: Engine) -> None:
    from statewright.db.repositories import dags as dag_repo

    h = harness(NOW)
    with DAG("pausing") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
    h.sync(dag)
    trigger(engine, "pausing", "r1", h.clock())
    h.executor.hold = True
    h.loop()
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "pausing", True)
    h.executor.finish()
    h.loop()
    assert {t.task_id: t.state for t in h.tis("pausing")} == {"a": "success", "b": "scheduled"}
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "pausing", False)
    h.executor.hold = False
    h.loop()
    assert {t.state for t in h.tis("pausing")} == {"success"}


def test_slot_stats_count_deferred_only_when_the_pool_says_so(harness: Callable,
                                                             engine: Engine) -> None:
    h = harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "d", 5, include_deferred=False)
    with DAG("deferring") as dag:
        NoopOperator(task_id="a", pool="d", pool_slots=2)
    h.sync(dag)
    trigger(engine, "deferring", "r1", h.clock())
    h.executor.hold = True
    h.loop()
    (ti,) = h.tis("deferring")
    with transaction(engine) as conn:
        door.set_task_instance_state(conn, ti.id, frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.WORKER, now=NOW, increment_try=True)
        door.set_task_instance_state(conn, ti.id, frm=TI.RUNNING, to=TI.DEFERRED,
                                     actor=Actor.WORKER, now=NOW)
    with engine.connect() as conn:
        stats = pool_repo.slot_stats(conn)["d"]
    assert (stats.deferred, stats.occupied, stats.open) == (2, 0, 5)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "d", 5, include_deferred=True)
    with engine.connect() as conn:
        stats = pool_repo.slot_stats(conn)["d"]
    assert (stats.occupied, stats.open) == (2, 3)


def test_the_default_pool_is_created_when_missing(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with transaction(engine) as conn:
        conn.execute(pool.delete())
    with DAG("plain") as dag:
        NoopOperator(task_id="a")
    h.sync(dag)
    trigger(engine, "plain", "r1", h.clock())
    h.loop()
    assert {t.state for t in h.tis("plain")} == {"success"}
    with engine.connect() as conn:
        default = pool_repo.get(conn, "default_pool")
    assert default is not None and default.slots == 128


def test_two_schedulers_queueing_at_once_on_postgres_never_overfill_a_pool(
        pg_harness: Callable, pg_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each scheduler counts the open slots only once the other's queued task instances are
    committed (the pool rows are its critical section): both choosing at the same moment would
    otherwise each take the pool's three slots. (Several schedulers share PostgreSQL, not a
    SQLite file.)"""
    engine = pg_engine
    from statewright.core.clock import ManualClock
    from statewright.services.dag_view import DagViewCache
    from statewright.services.scheduler import capacity
    from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

    h = pg_harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "p", 3)
    with DAG("contended") as dag:
        for i in range(6):
            NoopOperator(task_id=f"t{i}", pool="p")
    h.sync(dag)
    trigger(engine, "contended", "r1", h.clock())
    trigger(engine, "contended", "r2", h.clock())
    h.executor.slots = 0  # the harness's scheduler starts the runs and queues nothing
    h.loop()
    with engine.connect() as conn:
        run_pks = sorted(r.id for r in conn.execute(select(dag_run_table.c.id)).all())
        assert {r.state for r in conn.execute(select(task_instance.c.state)).all()} == {
            "scheduled"}
    # One scheduler per run, so that the two choose different task instances.
    schedulers = []
    for pk in run_pks:
        clock = ManualClock(NOW)
        executor = type(h.executor)(engine, clock)
        executor.hold = True
        schedulers.append(Scheduler(engine, executor, clock=clock, views=DagViewCache(),
                                    config=SchedulerConfig(only_runs=frozenset({pk}))))
    both_chose = threading.Barrier(2, timeout=1.0)
    real_choose = capacity._choose

    def choose_then_wait(scheduler: Any, conn: Any, slots: int, *rest: Any) -> list[int]:
        chosen = real_choose(scheduler, conn, slots, *rest)
        try:  # hold the choice until the other scheduler has chosen too (if it can)
            both_chose.wait()
        except threading.BrokenBarrierError:
            pass
        return list(chosen)

    monkeypatch.setattr(capacity, "_choose", choose_then_wait)
    counts: list[int] = []
    threads = [threading.Thread(target=lambda s=s: counts.append(
        capacity.queue_scheduled(s, NOW))) for s in schedulers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(counts) == [0, 3]
    assert occupied(engine, "p") == 3


def test_schedulers_starting_at_once_create_the_default_pool_once(pg_engine: Engine) -> None:
    engine = pg_engine
    results: list[bool] = []
    first = engine.connect()
    tx = first.begin()
    assert pool_repo.ensure_default(first) is True  # inserted, not committed yet

    def second() -> None:
        with transaction(engine) as conn:  # waits on the first one's row, then does nothing
            results.append(pool_repo.ensure_default(conn))

    t = threading.Thread(target=second)
    t.start()
    t.join(0.3)
    assert t.is_alive()  # blocked on the uncommitted row, not failed
    tx.commit()
    first.close()
    t.join(10)
    assert results == [False]
    with engine.connect() as conn:
        assert pool_repo.get(conn, pool_repo.DEFAULT_POOL).slots == pool_repo.DEFAULT_POOL_SLOTS


def test_a_full_pool_of_high_priority_tasks_does_not_starve_another_pool(
        harness: Callable, engine: Engine) -> None:
    """The first read of candidates returns only the full pool's tasks (highest priority, more
    than the read's limit); the scheduler reads again without that pool and queues the
    lower-priority task of a pool with room."""
    h = harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "busy", 0)  # full before the scheduler looks
        pool_repo.set_pool(conn, "free", 5)
    with DAG("starve", max_active_tasks=100) as dag:
        for i in range(12):
            NoopOperator(task_id=f"hot{i}", pool="busy", priority_weight=100,
                          weight_rule="absolute")
        NoopOperator(task_id="cold", pool="free", priority_weight=1, weight_rule="absolute")
    h.sync(dag)
    trigger(engine, "starve", "r1", h.clock())
    h.executor.hold = True
    h.executor.slots = 2  # each read of candidates returns at most 2 * 4 = 8 rows
    h.loop()
    states = {t.task_id: t.state for t in h.tis("starve")}
    assert states["cold"] == "queued"
    assert {v for k, v in states.items() if k.startswith("hot")} == {"scheduled"}


class NoExecutor:
    """An executor with no free slot: the scheduler registers, recovers and queues nothing."""

    identity = "none"

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Any) -> None:
        raise AssertionError("nothing is queued")


def test_a_second_scheduler_on_sqlite_is_warned_of(engine: Engine,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """On SQLite the schedulers do not serialize their queueing: starting a second one says so.
    On PostgreSQL, several schedulers are the supported way to scale, and nothing is said."""
    import logging

    from statewright.core.clock import utcnow
    from statewright.db.repositories import jobs as job_repo
    from statewright.services.scheduler.scheduler import Scheduler

    with transaction(engine) as conn:
        first = job_repo.register(conn, job_type="scheduler", hostname="elsewhere", pid=1,
                                  capacity=None, now=utcnow())
    stop = threading.Event()
    stop.set()  # register, recover, and stop
    with caplog.at_level(logging.WARNING, logger="statewright.scheduler"):
        Scheduler(engine, NoExecutor()).run_forever(stop)
    warned = [r.getMessage() for r in caplog.records if "Another scheduler" in r.getMessage()]
    if engine.dialect.name == "sqlite":
        assert len(warned) == 1 and f"job {first}" in warned[0]
    else:
        assert warned == []


def test_a_crashed_scheduler_of_this_host_is_not_taken_for_a_second_one(
        sqlite_engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import subprocess

    from statewright.core.clock import utcnow
    from statewright.db.repositories import jobs as job_repo
    from statewright.services.scheduler.scheduler import HOSTNAME, Scheduler

    gone = subprocess.Popen(["true"])
    gone.wait()
    with transaction(sqlite_engine) as conn:
        conn.execute(job_table.update().values(status="stopped"))
        job_repo.register(conn, job_type="scheduler", hostname=HOSTNAME, pid=gone.pid,
                          capacity=None, now=utcnow())

    stop = threading.Event()
    stop.set()
    with caplog.at_level(logging.WARNING, logger="statewright.scheduler"):
        Scheduler(sqlite_engine, NoExecutor()).run_forever(stop)
    assert not [r for r in caplog.records if "Another scheduler" in r.getMessage()]
