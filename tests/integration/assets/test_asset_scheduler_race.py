"""Two schedulers creating asset-triggered runs while events keep arriving: every event
triggers each consumer exactly once, and none is lost."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func, select
from tests.noop import NoopOperator

from statewright.db.engine import transaction
from statewright.db.tables import dag_run
from statewright.db.tables_assets import asset_event, asset_event_queue, dag_run_asset_event
from statewright.sdk import DAG, Asset
from statewright.services.asset_events import emit
from statewright.services.scheduler.asset_runs import AssetRunCreation

ASSETS = [Asset(f"s3://race/{i}") for i in range(4)]


def test_two_schedulers_racing_never_double_trigger_nor_lose_an_event(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    dags = []
    for i, a in enumerate(ASSETS):
        with DAG(f"consumer_{i}", schedule=[a], max_active_runs=10_000) as d:
            NoopOperator(task_id="t")
        dags.append(d)
    with DAG("any_consumer", schedule=ASSETS[0] | ASSETS[1] | ASSETS[2] | ASSETS[3],
             max_active_runs=10_000) as any_dag:
        NoopOperator(task_id="t")
    h.sync(*dags, any_dag)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    n_events = 120
    done = threading.Event()
    errors: list[BaseException] = []

    def post() -> None:
        try:
            for i in range(n_events):
                with transaction(engine) as conn:
                    emit(conn, ASSETS[i % 4].name, extra={"i": i},
                         now=start + timedelta(milliseconds=i), source="api")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            done.set()

    def schedule(step: AssetRunCreation) -> None:
        try:
            k = 0
            while not done.is_set():
                k += 1
                step.create_runs(engine, start + timedelta(seconds=k))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=post)] + [
        threading.Thread(target=schedule, args=(AssetRunCreation(),)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    AssetRunCreation().create_runs(engine, start + timedelta(hours=1))  # what is left

    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(asset_event)).scalar() == n_events
        assert conn.execute(select(func.count()).select_from(asset_event_queue)).scalar() == 0
        consumed = conn.execute(select(dag_run_asset_event.c.dag_id,
                                       dag_run_asset_event.c.asset_event_id)).all()
        runs = conn.execute(select(dag_run.c.id, dag_run.c.dag_id)).all()
        per_run = dict(conn.execute(select(dag_run_asset_event.c.dag_run_id, func.count())
                                    .group_by(dag_run_asset_event.c.dag_run_id)).all())
    # each consumer_i got exactly its asset's events once; any_consumer got all of them once
    assert len(consumed) == len(set(consumed)) == 2 * n_events
    for i in range(4):
        assert sum(1 for d, _ in consumed if d == f"consumer_{i}") == n_events // 4
    assert all(per_run.get(pk, 0) >= 1 for pk, _ in runs)  # no run without its events
