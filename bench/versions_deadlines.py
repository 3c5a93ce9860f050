"""DAG versions and deadline alerts: figures (not a test).

(a) 10,000 runs of a DAG with a ``DAGRUN_QUEUED_AT`` deadline alert (10,000 pending deadlines):
    the scheduler's deadline check per pass (median and p95 over ``--passes`` passes) when none
    is due, and when 100 fall due at once (they are recorded missed and their callbacks queued);
    whether the check reads the ``(status, deadline_time)`` index (SQLite's query plan);
(b) a DAG of ``--tasks`` tasks with ``--runs`` runs changed once: the rows and bytes a new
    version adds (``dag_version``) and the rows added to the run tables (none: runs point to
    versions by id).

Runs on SQLite and, when ``--postgres-url`` is given (default: the local server), on PostgreSQL.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _cpu import host_speed, metered, totals
from sqlalchemy import Engine, create_engine, func, select, text

from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import dag_run, state_transition, task_instance
from statewright.db.tables_deadlines import deadline
from statewright.db.tables_versions import dag_version
from statewright.sdk import DAG, DeadlineAlert, DeadlineReference, EmptyOperator, SyncCallback
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_view import DagView
from statewright.services.scheduler.deadlines import check_deadlines

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def notify(**_: Any) -> None:
    """The deadline callback (never called here)."""


def _chain(dag_id: str, tasks: int, **kwargs: Any) -> DAG:
    with DAG(dag_id, **kwargs) as dag:
        prev = None
        for i in range(tasks):
            op = EmptyOperator(task_id=f"t{i:03d}")
            if prev is not None:
                prev >> op
            prev = op
    return dag


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered) * 1000, 3),
            "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 3)}


def deadlines(engine: Engine, runs: int, passes: int) -> dict[str, Any]:
    dag = _chain("sla", 3, deadline=DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT, interval=timedelta(hours=1),
        callback=SyncCallback(notify)))
    ser = dag.serialize()
    rows = DagView(ser).task_rows()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, ser, now=T0)
    started = time.perf_counter()
    for second, start in enumerate(range(0, runs, 100)):  # 100 runs queued each second
        with transaction(engine) as conn:
            door.create_dag_runs(conn, [door.NewDagRun(
                dag_id="sla", run_id=f"r{i:05d}", run_type="manual", task_rows=rows)
                for i in range(start, min(runs, start + 100))],
                actor=Actor.SCHEDULER, now=T0 + timedelta(seconds=second))
    created = time.perf_counter() - started
    with engine.connect() as conn:
        pending = conn.execute(select(func.count()).select_from(deadline)).scalar_one()
    if engine.dialect.name == "postgresql":  # the steady state: statistics after the load
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE deadline, dag_run"))
    quiet = T0 + timedelta(minutes=30)  # none due yet
    check_deadlines(engine, quiet)
    idle = []
    for _ in range(passes):
        t = time.perf_counter()
        check_deadlines(engine, quiet)
        idle.append(time.perf_counter() - t)
    busy, missed = [], 0
    for k in range(10):  # 100 more fall due at each pass
        t = time.perf_counter()
        missed += check_deadlines(engine, T0 + timedelta(hours=1, seconds=k))
        busy.append(time.perf_counter() - t)
    return {"runs": runs, "pending_deadlines": pending,
            "create_runs_s": round(created, 2),
            "check_none_due": _ms(idle), "check_100_due": _ms(busy), "missed": missed,
            "uses_index": _uses_index(engine)}


def _uses_index(engine: Engine) -> bool | None:
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as conn:
        plan = conn.execute(text(
            "EXPLAIN QUERY PLAN SELECT id FROM deadline WHERE status = 'pending' "
            "AND deadline_time <= '2026-01-01' ORDER BY deadline_time LIMIT 1")).all()
    return any("ix_deadline_status_deadline_time" in str(r) for r in plan)


def _counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                for t in (dag_version, dag_run, task_instance, state_transition)}


def versions(engine: Engine, tasks: int, runs: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp())
    path = folder / "big.py"

    def sync(source: str, dag: DAG) -> None:
        path.write_text(source)
        with transaction(engine) as conn:
            FileSync(conn, now=T0, folder_prefix=str(folder) + "/", present_files={str(path)},
                     paused_at_creation=False).file(
                str(path), ImportOutcome(str(path), dags=[{**dag.serialize(),
                                                          "fileloc": str(path)}]),
                mtime=0.0, size=0, content_hash=None)

    source = "# a DAG file\n" + "x = 1\n" * 200
    sync(source, _chain("big", tasks))
    rows = DagView(_chain("big", tasks).serialize()).task_rows()
    with transaction(engine) as conn:
        door.create_dag_runs(conn, [door.NewDagRun(
            dag_id="big", run_id=f"r{i:05d}", run_type="manual", task_rows=rows)
            for i in range(runs)], actor=Actor.SCHEDULER, now=T0)
    sync(source, _chain("big", tasks))  # parsed again, nothing changed
    before = _counts(engine)
    sync(source + "# edited\n", _chain("big", tasks, description="edited"))
    after = _counts(engine)
    with engine.connect() as conn:
        newest = conn.execute(select(dag_version).order_by(dag_version.c.id.desc())).first()
    assert newest is not None
    size = len(json.dumps(newest.serialized)) + len(newest.source_code.encode())
    return {"tasks": tasks, "runs": runs,
            "rows_added": {k: after[k] - before[k] for k in after},
            "version_bytes": size, "serialized_bytes": len(json.dumps(newest.serialized)),
            "source_bytes": len(newest.source_code.encode())}


def _databases(pg_admin: str | None) -> list[tuple[str, Any]]:
    tmp = tempfile.mkdtemp()

    def sqlite() -> Engine:
        e = make_engine(f"sqlite:///{Path(tmp) / f'{uuid.uuid4().hex}.db'}")
        migrate(e)
        return e

    out: list[tuple[str, Any]] = [("sqlite", sqlite)]
    if pg_admin:
        admin = create_engine(pg_admin, isolation_level="AUTOCOMMIT")

        def postgres() -> Engine:
            name = f"sw_bench_{uuid.uuid4().hex[:8]}"
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            e = make_engine(pg_admin.rsplit("/", 1)[0] + f"/{name}")
            migrate(e)
            return e

        out.append(("postgres", postgres))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--version-runs", type=int, default=1000)
    parser.add_argument("--postgres-url", default=PG_ADMIN, help="admin URL ('' to skip)")
    args = parser.parse_args()
    host_speed()
    figures: dict[str, Any] = {"benchmark": "versions_deadlines"}
    for name, fresh in _databases(args.postgres_url or None):
        url = args.postgres_url if name == "postgres" else None
        figures[f"deadlines_{name}"] = metered(url, args.passes, "pass", deadlines, fresh(),
                                               args.runs, args.passes)
        # Per run created beside the versions (the runs' creation dominates).
        figures[f"versions_{name}"] = metered(url, args.version_runs, "run", versions, fresh(),
                                              args.tasks, args.version_runs)
    figures.update(totals(figures, None, "pass"))
    # The line's figure per pass: the deadline passes' CPU alone (on each database).
    passes = [v["cpu_s"] for k, v in figures.items() if k.startswith("deadlines_")]
    figures["cpu_ms_per_pass"] = round(sum(passes) * 1000 / (args.passes * len(passes)), 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
