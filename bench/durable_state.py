"""Durable state figures (not a test).

(a) a task's ``task_state_store.set`` then ``.get`` of one key, median over ``--writes`` pairs,
    timed inside a running task (dag.test: the in-process executor answers the task's requests
    as its worker does: the try-number fence, one write transaction, one read), on SQLite and,
    when ``--postgres-url`` is given (default: the local server), on PostgreSQL;
(b) a listener's cost per state change: the door's after-commit relay turning ``--events``
    committed task-instance changes into ``on_task_instance_success`` calls of a plugin's
    no-op listener, per event, with the DAG in memory and with the task looked up in the
    database.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _cpu import flat, host_speed, metered, totals
from sqlalchemy import Engine, create_engine, text

from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.db.transition import ENTITY_TI, TransitionEvent
from statewright.sdk import DAG, task
from statewright.sdk import plugins as plugin_registry
from statewright.services import listeners


def _state_store(engine: Engine, writes: int) -> dict[str, float]:
    timings: list[float] = []
    with DAG("bench_state", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        @task
        def writer(task_state_store: Any = None) -> None:
            for i in range(writes):
                started = time.perf_counter()
                task_state_store.set("progress", {"done": i, "rows": i * 100})
                assert task_state_store.get("progress")["done"] == i
                timings.append(time.perf_counter() - started)
        writer()
    run = dag.test(engine=engine)
    assert run.state.value == "success", run.state
    return {"write_read_median_ms": round(statistics.median(timings) * 1000, 3),
            "write_read_p90_ms": round(sorted(timings)[int(len(timings) * 0.9)] * 1000, 3)}


def _postgres(url: str) -> Engine:
    admin = create_engine(url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("DROP DATABASE IF EXISTS statewright_bench_state WITH (FORCE)"))
        conn.execute(text("CREATE DATABASE statewright_bench_state"))
    admin.dispose()
    engine = make_engine(url.rsplit("/", 1)[0] + "/statewright_bench_state")
    migrate(engine)
    return engine


class _Quiet:
    calls = 0

    @classmethod
    def on_task_instance_success(cls, previous_state: Any, task_instance: Any) -> None:
        cls.calls += 1


class _BenchPlugin(plugin_registry.StatewrightPlugin):
    name = "bench"
    listeners = [_Quiet]


def _listener_cost(engine: Engine, events: int) -> dict[str, float]:
    plugin_registry.register_plugin(_BenchPlugin)
    listeners.install(engine)
    now = datetime.now(UTC)
    batch = [TransitionEvent(ENTITY_TI, 1, "bench_state", "r", "writer", "running", "success",
                             "Success", 1, "worker", now, -1) for _ in range(events)]
    out = {}
    for label, dags in (("dag_in_memory", {"bench_state": _DAG}), ("task_from_database", {})):
        listeners._dags.clear()
        listeners.remember_dags(dags)
        started = time.perf_counter()
        listeners._on_events(batch)
        out[f"listener_us_per_change_{label}"] = round(
            (time.perf_counter() - started) / events * 1e6, 2)
    assert _Quiet.calls == 2 * events
    return out


_DAG: Any = None


def main() -> None:
    global _DAG
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/"
                        "postgres")
    args = parser.parse_args()
    host_speed()
    figures: dict[str, Any] = {"bench": "durable_state", "writes": args.writes,
                               "events": args.events}
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        migrate(sqlite)
        figures["sqlite"] = metered(None, args.writes, "write", _state_store, sqlite,
                                    args.writes)
        ops = args.writes + args.events
        if args.postgres_url:
            pg = _postgres(args.postgres_url)
            figures["postgres"] = metered(args.postgres_url, args.writes, "write", _state_store,
                                          pg, args.writes)
            ops += args.writes
            pg.dispose()
        with DAG("bench_state", schedule=None, start_date=datetime(2024, 1, 1)) as _DAG:
            @task
            def writer() -> None: ...
            writer()
        listener = metered(None, args.events, "event", _listener_cost, sqlite, args.events)
        flat(figures, "listener", listener)
        sqlite.dispose()
    # Per operation: a state store write and read back, or a listener event.
    figures.update(totals(figures, ops, "op"))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
