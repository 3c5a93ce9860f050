"""DAG processing and scheduled-run creation at scale (not a test).

(a) 1,000 generated DAG files of 10 tasks each, imported and synced by the DAG processor
    (one process per file, ``--parallelism`` at a time): files per second;
(b) the scheduler's run-creation step for those 1,000 active DAGs on cron ``* * * * *``: the
    time of one loop that creates the 1,000 due runs (10,000 task instances), on a manual clock
    — the first loop (cold caches) and the median of the next ones, wall and CPU time of this
    process (the CPU figure shows the cost when other processes compete for the machine); and
    the same for 1,000 DAGs whose start dates all differ (no two share a next-run computation).

Prints one JSON line. SQLite in a temporary directory unless ``--database-url`` is given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _cpu import flat, host_speed, metered, totals
from sqlalchemy import Engine, func, select, text

from statewright.core.clock import ManualClock
from statewright.db import transition as door
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.tables import dag_run, metadata
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.scheduler.dagrun_creation import DagRunCreation

DAG_FILE = '''
from datetime import UTC, datetime
from statewright.sdk import DAG, EmptyOperator, chain

with DAG("bench_{i:04d}", schedule="* * * * *", start_date=datetime(2026, 1, 1, tzinfo=UTC),
         catchup=False, tags=["bench"]):
    chain(*[EmptyOperator(task_id=f"t{{n}}") for n in range(10)])
'''


def _fresh(engine: Engine) -> None:
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
            conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        else:
            for t in reversed(metadata.sorted_tables):
                conn.execute(t.delete())


def parse(engine: Engine, folder: Path, files: int, parallelism: int) -> dict[str, Any]:
    for i in range(files):
        (folder / f"bench_{i:04d}.py").write_text(DAG_FILE.format(i=i))
    clock = ManualClock(datetime(2026, 3, 2, 12, 0, 30, tzinfo=UTC))
    proc = DagProcessor(engine, folder, clock=clock, parallelism=parallelism, timeout=30.0)
    started = time.perf_counter()
    stats = proc.run_once()
    seconds = time.perf_counter() - started
    assert stats.dags == files and not stats.errors, stats.errors
    again = time.perf_counter()
    unchanged = proc.run_once()
    return {
        "files": files,
        "parallelism": parallelism,
        "parse_seconds": round(seconds, 3),
        "parse_files_per_s": round(files / seconds, 1),
        "rescan_unchanged_ms": round((time.perf_counter() - again) * 1000, 1),
        "rescan_imported": unchanged.parsed,
    }


def _loops(engine: Engine, minutes: int) -> tuple[list[float], int, list[float]]:
    step = DagRunCreation(max_dags_per_loop=1000)
    # A running scheduler listens to every committed transition (to wake up): so does this.
    remove = door.add_transition_listener(lambda events: None)
    clock = ManualClock(datetime(2026, 3, 2, 12, 1, tzinfo=UTC))
    times: list[float] = []
    cpu: list[float] = []
    created = 0
    for _ in range(minutes):
        started, cpu_started = time.perf_counter(), time.process_time()
        n = step.create_due_runs(engine, clock())
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        created += n
        clock.advance(timedelta(minutes=1))
    remove()
    return times, created, cpu


def create_loops(engine: Engine, dags: int, minutes: int) -> dict[str, Any]:
    times, created, cpu = _loops(engine, minutes)
    with engine.connect() as conn:
        runs = conn.execute(select(func.count()).select_from(dag_run)).scalar_one()
    assert created == runs == dags * minutes, (created, runs)
    idle = DagRunCreation()
    started = time.perf_counter()
    assert idle.create_due_runs(engine, datetime(2026, 3, 2, 12, 0, 30, tzinfo=UTC)) == 0
    return {
        "dags": dags,
        "runs_per_loop": dags,
        "task_instances_per_loop": dags * 10,
        "create_loop_ms_first": round(times[0], 1),
        "create_loop_ms_median": round(statistics.median(times[1:]), 1),
        "create_loop_ms_max": round(max(times[1:]), 1),
        "create_loop_cpu_ms_median": round(statistics.median(cpu[1:]), 1),
        "idle_loop_ms": round((time.perf_counter() - started) * 1000, 2),
    }


def distinct_starts(engine: Engine, dags: int, minutes: int) -> dict[str, Any]:
    """The same loop for DAGs whose start dates all differ."""
    _fresh(engine)
    now = datetime(2026, 3, 2, 12, 0, 30, tzinfo=UTC)
    outcome = ImportOutcome("/bench/distinct.py")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(dags):
        outcome.dags.append({
            "dag_id": f"distinct_{i:04d}", "schedule": "* * * * *", "timezone": "UTC",
            "start_date": (base + timedelta(minutes=i)).isoformat(), "end_date": None,
            "catchup": False, "max_active_runs": 16, "max_active_tasks": 16,
            "tasks": [{"task_id": f"t{n}", "upstream": [f"t{n - 1}"] if n else [],
                       "downstream": [f"t{n + 1}"] if n < 9 else []} for n in range(10)]})
    with transaction(engine) as conn:
        FileSync(conn, now=now, folder_prefix="/bench/", present_files={outcome.path},
                 paused_at_creation=False).file(outcome.path, outcome, mtime=0.0, size=0,
                                                 content_hash="x")
    times, _, cpu = _loops(engine, minutes)
    return {"distinct_start_create_loop_ms_median": round(statistics.median(times[1:]), 1),
            "distinct_start_create_loop_cpu_ms_median": round(statistics.median(cpu[1:]), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--minutes", type=int, default=6)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    host_speed()
    with tempfile.TemporaryDirectory(prefix="statewright-bench-") as tmp_name:
        tmp = Path(tmp_name)
        url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
        engine = make_engine(url)
        migrate(engine)
        _fresh(engine)
        (tmp / "dags").mkdir()
        out: dict[str, Any] = {"database": engine.dialect.name}
        runs = args.files * args.minutes
        phases = {
            "parse": metered(args.database_url, args.files, "file", parse, engine,
                             tmp / "dags", args.files, args.parallelism),
            "create": metered(args.database_url, runs, "run", create_loops, engine,
                              args.files, args.minutes),
            "distinct": metered(args.database_url, runs, "run", distinct_starts, engine,
                                args.files, args.minutes)}
        for name, figures in phases.items():
            flat(out, name, figures)
        engine.dispose()
    out.update(totals(out, args.files, "file"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
