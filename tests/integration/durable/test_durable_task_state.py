"""Task state and asset state through dag.test() (SQLite and PostgreSQL): retries read what
earlier tries kept, retention, map indexes, async, asset state, bad input, the try fence."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from statewright.core.task_state import NEVER_EXPIRE, StaleTryWrite
from statewright.db.repositories import task_state as repo
from statewright.db.tables import state_transition
from statewright.sdk import DAG, Asset, task
from statewright.services.task_state_view import asset_state, task_state
from statewright.services.worker.task_state import RelayStateBackend, StateRequest, answer

START = datetime(2024, 1, 1)
NO_DELAY = timedelta(seconds=0)


def _state(engine: Engine, dag_id: str, run_id: str, task_id: str) -> dict[str, object]:
    with engine.connect() as conn:
        return {r["key"]: r["value"] for r in task_state(conn, dag_id, run_id, task_id)}


def test_a_retry_reads_what_the_first_try_kept_by_retention(engine: Engine) -> None:
    seen: list[tuple[object, object, object]] = []
    with DAG("ts_retry", schedule=None, start_date=START) as dag:
        @task(retries=1, retry_delay=NO_DELAY)
        def job(task_state_store=None, ti=None):  # type: ignore[no-untyped-def]
            s = task_state_store
            seen.append((s.get("job_id"), s.get("scratch", "none"), s.get("seen_at")))
            if ti.try_number == 1:
                s.set("job_id", "J1", retention=NEVER_EXPIRE)
                s.set("scratch", "only this try", retention="try")
                s.set("seen_at", 1)
                raise RuntimeError("lost the connection")
            return s.get("job_id")
        job()
    run = dag.test(engine=engine)
    assert run.state.value == "success"
    assert seen == [(None, "none", None), ("J1", "none", 1)]
    assert run.ti("job").return_value == "J1"
    assert _state(engine, "ts_retry", run.run_id, "job") == {"job_id": "J1", "seen_at": 1}


def test_mapped_instances_keep_their_own_state(engine: Engine) -> None:
    with DAG("ts_mapped", schedule=None, start_date=START) as dag:
        @task
        def each(x: int, task_state_store=None, ti=None):  # type: ignore[no-untyped-def]
            assert task_state_store.get("x") is None
            task_state_store.set("x", x * 10)
            return task_state_store.get("x")
        each.expand(x=[1, 2, 3])
    run = dag.test(engine=engine)
    assert run.state.value == "success"
    with engine.connect() as conn:
        rows = task_state(conn, "ts_mapped", run.run_id, "each")
        assert [(r["map_index"], r["value"]) for r in rows] == [(0, 10), (1, 20), (2, 30)]
        assert [r["value"] for r in task_state(conn, "ts_mapped", run.run_id, "each", 1)] == [20]


def test_async_task_checkpoints_with_aget_and_aset(engine: Engine) -> None:
    with DAG("ts_async", schedule=None, start_date=START) as dag:
        @task(retries=1, retry_delay=NO_DELAY)
        async def pages(task_state_store=None, ti=None):  # type: ignore[no-untyped-def]
            done = await task_state_store.aget("done", default=[])
            for page in range(len(done), 4):
                await asyncio.sleep(0)
                done.append(page)
                await task_state_store.aset("done", done, retention=NEVER_EXPIRE)
                if ti.try_number == 1 and page == 1:
                    raise RuntimeError("staged failure")
            await task_state_store.adelete("nothing-there")
            return done
        pages()
    run = dag.test(engine=engine)
    assert run.state.value == "success"
    assert run.ti("pages").return_value == [0, 1, 2, 3]


def test_asset_state_is_shared_by_producer_and_consumer(engine: Engine) -> None:
    orders = Asset(name="ts_orders", uri="s3://w/orders")
    with DAG("ts_producer", schedule=None, start_date=START) as producer:
        @task(outlets=[orders])
        def load(asset_state_store=None):  # type: ignore[no-untyped-def]
            state = asset_state_store[orders]
            state.set("runs", state.get("runs", default=0) + 1)
        load()
    with DAG("ts_consumer", schedule=None, start_date=START) as consumer:
        @task
        def read(asset_state_store=None):  # type: ignore[no-untyped-def]
            return asset_state_store["ts_orders"].get("runs")
        read()
    producer.test(engine=engine, run_id="first")
    producer.test(engine=engine, run_id="second")
    run = consumer.test(engine=engine)
    assert run.ti("read").return_value == 2
    with engine.connect() as conn:
        (row,) = asset_state(conn, "ts_orders")
    assert row["value"] == 2 and row["written_by"] == "ts_producer/second/load"


@pytest.mark.parametrize(("value", "said"), [
    ({1, 2}, "not JSON-serialisable"),
    ("x" * 70_000, "more than the limit"),
])
def test_a_value_the_store_cannot_keep_fails_the_task_naming_the_key(
        engine: Engine, value: object, said: str) -> None:
    with DAG("ts_bad", schedule=None, start_date=START) as dag:
        @task
        def bad(task_state_store=None):  # type: ignore[no-untyped-def]
            task_state_store.set("good", 1)
            task_state_store.set("payload", value)
        bad()
    run = dag.test(engine=engine)
    assert run.state.value == "failed"
    message = run.ti("bad").state_message or ""
    assert "'payload'" in message and said in message, message
    assert _state(engine, "ts_bad", run.run_id, "bad") == {"good": 1}


def test_a_stale_try_cannot_overwrite_its_successors_state(engine: Engine) -> None:
    with DAG("ts_fence", schedule=None, start_date=START) as dag:
        @task(retries=1, retry_delay=NO_DELAY)
        def job(task_state_store=None, ti=None):  # type: ignore[no-untyped-def]
            task_state_store.set("owner", f"try {ti.try_number}")
            if ti.try_number == 1:
                raise RuntimeError("first try lost")
        job()
    run = dag.test(engine=engine)
    assert run.ti("job").try_number == 2
    now = datetime.now().astimezone()
    scope = ("task", "ts_fence", run.run_id, "job", -1, 1)  # the zombie first try
    reply = answer(engine, StateRequest("put", scope, "owner", '"zombie"', None), now=now)
    assert reply.refused and "try 1 is stale" in reply.refused
    backend = RelayStateBackend(lambda request: answer(engine, request, now=now))
    with pytest.raises(StaleTryWrite, match="'owner'"):
        backend.put(scope, "owner", '"zombie"', None)
    assert _state(engine, "ts_fence", run.run_id, "job") == {"owner": "try 2"}
    with engine.connect() as conn:
        notes = conn.execute(select(state_transition.c.message).where(
            state_transition.c.dag_id == "ts_fence",
            state_transition.c.message.like("refused a write%"))).scalars().all()
    assert len(notes) == 2 and "'owner'" in notes[0], notes
    # the run's own try, finished, can no longer write either
    finished = ("task", "ts_fence", run.run_id, "job", -1, 2)
    reply = answer(engine, StateRequest("put", finished, "owner", '"late"', None), now=now)
    assert reply.refused and "no longer running" in reply.refused


def test_clearing_keeps_state_unless_asked_and_a_rerun_drops_run_values(
        engine: Engine) -> None:
    from statewright.services.controls import clear_task_instances

    with DAG("ts_clear", schedule=None, start_date=START) as dag:
        @task
        def keep(task_state_store=None):  # type: ignore[no-untyped-def]
            task_state_store.set("forever", 1, retention=NEVER_EXPIRE)
            task_state_store.set("this_run", 2)
        keep()
    run = dag.test(engine=engine, run_id="a")
    other = dag.test(engine=engine, run_id="b")
    now = datetime.now().astimezone()
    assert _state(engine, "ts_clear", run.run_id, "keep") == {"forever": 1, "this_run": 2}
    clear_task_instances(engine, run.run_id, dag_id="ts_clear", now=now)
    # the ended run starts over: what was kept "for the run" is gone, NEVER_EXPIRE stays
    assert _state(engine, "ts_clear", run.run_id, "keep") == {"forever": 1}
    clear_task_instances(engine, other.run_id, dag_id="ts_clear", now=now, clear_state=True)
    assert _state(engine, "ts_clear", other.run_id, "keep") == {}


def test_repository_reads_hide_values_of_another_try(engine: Engine) -> None:
    with engine.connect() as conn:
        assert repo.read(conn, repo.TaskKey("none", "none", "none"), "k", reader_try=1) is None
