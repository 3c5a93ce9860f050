"""Asset events recorded with a try's success, and asset-triggered runs (Airflow 3 semantics)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, func, select
from tests.noop import NoopOperator

from statewright.db.tables_assets import asset_event_queue, dag_run_asset_event
from statewright.sdk import DAG, Asset, AssetAlias, task

A, B, C = Asset("s3://b/a"), Asset("s3://b/b"), Asset(name="c", uri="file:///data/c")


def producer(dag_id: str, asset: Any, **task_kwargs: Any) -> DAG:
    with DAG(dag_id, schedule=None) as dag:
        NoopOperator(task_id="write", outlets=[asset], **task_kwargs)
    return dag


def consumer(dag_id: str, schedule: Any, seen: list[Any] | None = None) -> DAG:
    with DAG(dag_id, schedule=schedule) as dag:
        @task
        def read(triggering_asset_events: Any = None) -> None:
            if seen is not None:
                seen.append({k: [(e.asset.uri, e.extra, e.source_dag_id)
                                 for e in triggering_asset_events[k]]
                             for k in triggering_asset_events})
        read()
    return dag


def test_a_producer_success_records_an_event_and_triggers_its_consumer(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    seen: list[Any] = []
    h.sync(producer("p", A), consumer("c", [A], seen))
    run_id = h.trigger("p")
    h.loop()
    (event,) = h.events(A.name)
    assert (event["source_dag_id"], event["source_run_id"], event["source_task_id"],
            event["source_map_index"], event["source"]) == ("p", run_id, "write", -1, "task")
    (run,) = h.runs("c")
    assert run.run_type == "asset_triggered" and run.state == "success"
    assert run.logical_date is None and run.triggered_by == "asset"
    assert run.run_after == event["timestamp"]
    assert run.run_id == f"asset_triggered__{event['timestamp'].isoformat()}"
    assert [e["id"] for e in h.triggering(run.id)] == [event["id"]]
    assert seen == [{A.name: [("s3://b/a", {}, "p")]}]
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(asset_event_queue)).scalar() == 0


def test_the_event_is_written_in_the_transaction_of_the_success(assets_harness: Callable) -> None:
    h = assets_harness()
    h.sync(producer("p", A))
    h.trigger("p")
    h.loop()
    (ti,) = h.tis("p")
    (event,) = h.events(A.name)
    assert ti.state == "success" and event["timestamp"] == ti.end_date


def test_a_failed_try_records_no_event(assets_harness: Callable) -> None:
    h = assets_harness()
    with DAG("p", schedule=None) as dag:
        @task(outlets=[A])
        def boom() -> None:
            raise RuntimeError("no data")
        boom()
    h.sync(dag, consumer("c", [A]))
    h.trigger("p")
    h.loop()
    assert h.events() == [] and h.runs("c") == []


def test_outlet_events_extra_reaches_the_event_and_the_consumer(assets_harness: Callable) -> None:
    h = assets_harness()
    seen: list[Any] = []
    with DAG("p", schedule=None) as dag:
        @task(outlets=[A])
        def write(outlet_events: Any = None) -> None:
            outlet_events[A].extra = {"rows": 42}
        write()
    h.sync(dag, consumer("c", A, seen))
    h.trigger("p")
    h.loop()
    assert [e["extra"] for e in h.events(A.name)] == [{"rows": 42}]
    assert seen == [{A.name: [("s3://b/a", {"rows": 42}, "p")]}]


def test_all_of_a_list_waits_for_every_asset(assets_harness: Callable) -> None:
    h = assets_harness()
    h.sync(producer("pa", A), producer("pb", B), consumer("c", [A, B]))
    h.trigger("pa")
    h.loop()
    h.trigger("pa")
    h.loop()
    assert h.runs("c") == []
    h.trigger("pb")
    h.loop()
    (run,) = h.runs("c")
    # both events of a and the one of b: everything since the last asset-triggered run
    assert sorted(e["asset"]["name"] for e in h.triggering(run.id)) == [A.name, A.name, B.name]
    h.trigger("pb")
    h.loop()
    assert len(h.runs("c")) == 1  # b again, but a has nothing new


def test_a_or_b_and_c(assets_harness: Callable) -> None:
    h = assets_harness()
    h.sync(producer("pa", A), producer("pb", B), producer("pc", C),
           consumer("c", A | (B & C)))
    h.trigger("pb")
    h.loop()
    assert h.runs("c") == []
    h.trigger("pc")
    h.loop()
    assert len(h.runs("c")) == 1
    h.trigger("pa")
    h.loop()
    runs = h.runs("c")
    assert len(runs) == 2
    assert [e["asset"]["name"] for e in h.triggering(runs[1].id)] == [A.name]


def test_an_event_posted_by_b_while_waiting_is_consumed_with_the_run(
        assets_harness: Callable) -> None:
    h = assets_harness()
    h.sync(producer("pa", A), producer("pb", B), consumer("c", A | (B & C)))
    h.trigger("pb")
    h.loop()
    h.trigger("pa")
    h.loop()
    (run,) = h.runs("c")
    assert sorted(e["asset"]["name"] for e in h.triggering(run.id)) == [A.name, B.name]


def test_a_paused_consumer_is_not_queued(assets_harness: Callable, engine: Engine) -> None:
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo

    h = assets_harness()
    h.sync(producer("p", A), consumer("c", [A]))
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "c", True)
    h.trigger("p")
    h.loop()
    assert h.runs("c") == []


def test_an_alias_resolved_at_run_time(assets_harness: Callable) -> None:
    h = assets_harness()
    alias = AssetAlias("example-alias")
    target = Asset("s3://bucket/my-task")
    seen: list[Any] = []
    with DAG("alias_producer", schedule=None) as dag:
        @task(outlets=[alias])
        def emit(outlet_events: Any = None) -> None:
            outlet_events[alias].add(target, extra={"k": 1})
        emit()
    with DAG("alias_consumer", schedule=[alias]) as alias_consumer:
        @task(inlets=[alias])
        def read(inlet_events: Any = None) -> None:
            seen.extend((e.asset.uri, e.extra) for e in inlet_events[alias])
        read()
    h.sync(dag, alias_consumer, consumer("asset_consumer", [target]))
    h.trigger("alias_producer")
    h.loop()
    (event,) = h.events(target.name)
    assert event["source_aliases"] == ["example-alias"] and event["extra"] == {"k": 1}
    assert len(h.runs("asset_consumer")) == 1
    # Scheduled on the alias: triggered by the event emitted through it (as in Airflow 3, the
    # consumers of an event's source aliases are queued with it)
    (run,) = h.runs("alias_consumer")
    assert run.state == "success"
    assert seen == [("s3://bucket/my-task", {"k": 1})]
    # once resolved, an event of the asset itself triggers the alias's consumers too
    h.sync(producer("direct", target), fileloc="/virtual/dags/direct.py")
    h.trigger("direct")
    h.loop()
    assert len(h.runs("alias_consumer")) == 2 and len(h.runs("asset_consumer")) == 2


def test_no_event_triggers_a_dag_twice(assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    h.sync(producer("p", A), consumer("c", [A]))
    for _ in range(3):
        h.trigger("p")
        h.clock.advance(1)
    h.loop()
    runs = h.runs("c")
    consumed = [e["id"] for r in runs for e in h.triggering(r.id)]
    assert sorted(consumed) == sorted(e["id"] for e in h.events(A.name))
    assert len(consumed) == len(set(consumed)) == 3
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(dag_run_asset_event)).scalar() == 3


def test_asset_or_time_schedule_runs_on_both(assets_harness: Callable) -> None:
    from datetime import UTC, datetime

    from statewright.core.timetables import CronTriggerTimetable
    from statewright.sdk import AssetOrTimeSchedule

    h = assets_harness(datetime(2026, 1, 6, 23, 0, tzinfo=UTC))  # a Tuesday
    with DAG("both", start_date=datetime(2026, 1, 1, tzinfo=UTC), catchup=False,
             schedule=AssetOrTimeSchedule(
                 timetable=CronTriggerTimetable("0 1 * * 3", timezone="UTC"),
                 assets=(A & B))) as both:
        NoopOperator(task_id="t")
    h.sync(producer("pa", A), producer("pb", B), both)
    row = h.dag_row("both")
    assert row.next_dagrun_create_after == datetime(2026, 1, 7, 1, tzinfo=UTC)
    h.trigger("pa")
    h.clock.advance(1)
    h.trigger("pb")
    h.loop()
    assert [r.run_type for r in h.runs("both")] == ["asset_triggered"]
    h.clock.advance(3 * 3600)  # past Wednesday 01:00
    h.loop()
    assert sorted(r.run_type for r in h.runs("both")) == ["asset_triggered", "scheduled"]


def test_an_extra_that_is_not_json_fails_the_try_and_records_nothing(
        assets_harness: Callable) -> None:
    h = assets_harness()
    with DAG("p", schedule=None) as dag:
        @task(outlets=[A])
        def write(outlet_events: Any = None) -> None:
            outlet_events[A].extra = {"when": object()}
        write()
    h.sync(dag, consumer("c", [A]))
    h.trigger("p")
    h.loop()
    (ti,) = h.tis("p")
    assert ti.state == "failed" and "extra must be plain JSON data" in (ti.state_message or "")
    assert h.events() == [] and h.runs("c") == []


def test_only_an_alias_is_resolved_with_add(assets_harness: Callable) -> None:
    h = assets_harness()
    with DAG("p", schedule=None) as dag:
        @task(outlets=[A])
        def write(outlet_events: Any = None) -> None:
            outlet_events[A].add(B)
        write()
    h.sync(dag)
    h.trigger("p")
    h.loop()
    (ti,) = h.tis("p")
    assert ti.state == "failed" and "only an AssetAlias is resolved" in (ti.state_message or "")
