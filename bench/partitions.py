"""Partition-aware scheduling figures (not a test).

1,000 upstream partition events (one asset, 1,000 hourly partition keys, recorded in one
transaction) and one consumer DAG on ``PartitionedAssetTimetable``:

(a) ``aligned``: ``StartOfHourMapper`` -- one consumer run per key, 1,000 runs;
(b) ``rollup``: ``RollupMapper(StartOfDayMapper(), DayWindow())`` -- one run per complete day.

Each figure is the wall time of the scheduler's asset step (``AssetRunCreation``) run back to
back until every run exists, on SQLite and (with ``--postgres-url``) PostgreSQL. One JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from _cpu import host_speed, metered, totals
from assets import PG_ADMIN, _databases, _sync
from sqlalchemy import Engine, func, select

from statewright.db.engine import transaction
from statewright.db.repositories.asset_events import NewAssetEvent, record
from statewright.db.tables import dag_run
from statewright.sdk import (
    DAG,
    Asset,
    DayWindow,
    PartitionedAssetTimetable,
    RollupMapper,
    StartOfDayMapper,
    StartOfHourMapper,
)
from statewright.sdk.operators import EmptyOperator
from statewright.services.scheduler.asset_runs import AssetRunCreation

START = datetime(2026, 1, 1, tzinfo=UTC)


def scenario(engine: Engine, n: int, mapper: Any, expected: int) -> dict[str, float]:
    asset = Asset("s3://bench/partitioned")
    with DAG("consumer", schedule=PartitionedAssetTimetable(
            assets=asset, default_partition_mapper=mapper), max_active_runs=100_000) as dag:
        EmptyOperator(task_id="t")
    _sync(engine, [dag], "/bench/partitions")
    keys = [(START + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S") for i in range(n)]
    t0 = time.perf_counter()
    with transaction(engine) as conn:
        record(conn, [NewAssetEvent(asset={"name": asset.name, "uri": asset.uri},
                                    source="api", partition_key=k) for k in keys],
               datetime.now(UTC))
    posted = time.perf_counter() - t0
    step, loops, created = AssetRunCreation(), 0, 0
    t1 = time.perf_counter()
    while created < expected and loops < 100:
        step.create_runs(engine, datetime.now(UTC))
        loops += 1
        with engine.connect() as conn:
            created = int(conn.execute(select(func.count()).select_from(dag_run).where(
                dag_run.c.dag_id == "consumer")).scalar() or 0)
    elapsed = time.perf_counter() - t1
    return {"events": n, "runs": created, "record_events_s": round(posted, 3),
            "create_runs_s": round(elapsed, 3), "step_calls": loops,
            "runs_per_s": round(created / elapsed, 1) if elapsed else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--postgres-url", default=PG_ADMIN, help="admin URL ('' to skip)")
    args = parser.parse_args()
    host_speed()
    figures: dict[str, Any] = {"benchmark": "partitions"}
    for name, engine, fresh in _databases(args.postgres_url or None):
        url = args.postgres_url if name == "postgres" else None
        figures[f"aligned_{name}"] = metered(url, args.events, "event", scenario, engine,
                                             args.events, StartOfHourMapper(), args.events)
        figures[f"rollup_{name}"] = metered(url, args.events, "event", scenario, fresh(),
                                            args.events, RollupMapper(StartOfDayMapper(),
                                                                      DayWindow()),
                                            args.events // 24)
    # Per partitioned asset event: recorded, and the runs it makes.
    measured = sum(1 for v in figures.values() if isinstance(v, dict))
    figures.update(totals(figures, args.events * measured, "event"))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
