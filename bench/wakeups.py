"""How soon a scheduler of another process acts on a run this process triggers (not a test).

A scheduler process (with its LocalExecutor, as ``throughput.py`` starts one) runs on a fresh
SQLite file, or a fresh PostgreSQL database with ``--database-url``; this process triggers
``--runs`` runs of a one-task DAG one after the other, each when the one before has ended, as
the API server or a user's script would. For
each run the history gives the moments (each the writer's clock when its transaction began):
trigger → the run started (``to_running``) → its task queued (``to_queued``). Without a wake-up
across processes the scheduler sees each new run only on its idle timer (``idle_seconds``,
1 s); with one (``db.wakeups``: ``pg_notify`` at commit, a datagram on SQLite) it is woken by
the commit.

Usage: python bench/wakeups.py [--database-url postgresql://postgres@127.0.0.1:5432/postgres]
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import tempfile
from pathlib import Path
from typing import Any

from _cpu import CpuMeter, host_speed
from throughput import ROLES, _database, _scheduler_main, _trigger_and_wait

from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.db.repositories import transitions_log
from statewright.services.dag_processor import DagProcessor

DAG_FILE = '''
from statewright.sdk import DAG, task

@task
def noop():
    return None

with DAG("one", schedule=None, max_active_runs=1000):
    noop()
'''


def _moments(engine: Any, run_id: str) -> dict[str, float]:
    with engine.connect() as conn:
        history = transitions_log.for_run(conn, "one", run_id)
    at: dict[tuple[str, str], Any] = {}
    for h in history:
        at.setdefault((h.entity, h.to_state), h.at)
    created = at[("dag_run", "queued")]
    return {"to_running": (at[("dag_run", "running")] - created).total_seconds() * 1000,
            "to_queued": (at[("task_instance", "queued")] - created).total_seconds() * 1000}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--database-url", help="a PostgreSQL server (a fresh database is created "
                   "on it for the run). Default: SQLite in a temporary folder")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    host_speed()
    tmp = Path(tempfile.mkdtemp(prefix="statewright-bench-"))
    (tmp / "dags").mkdir()
    (tmp / "dags" / "one.py").write_text(DAG_FILE)
    out: dict[str, Any] = {"bench": "wakeups", "runs": args.runs,
                           "database": "postgresql" if args.database_url else "sqlite"}
    with _database(args.database_url, tmp) as url:
        engine = make_engine(url)
        migrate(engine)
        DagProcessor(engine, tmp / "dags").run_once()
        ctx = mp.get_context("spawn")
        stop, ready = ctx.Event(), ctx.Event()
        proc = ctx.Process(target=_scheduler_main, args=(url, str(tmp / "logs"), 2, stop, ready))
        proc.start()
        ready.wait(120)
        try:
            _trigger_and_wait(engine, "one", "warm", 120)
            stages: dict[str, list[float]] = {"to_running": [], "to_queued": []}
            with CpuMeter(args.database_url, ROLES) as cpu:
                for i in range(args.runs):
                    state, _ = _trigger_and_wait(engine, "one", f"r{i}", 120)
                    assert state == "success", state
                    for k, v in _moments(engine, f"r{i}").items():
                        stages[k].append(v)
            for k, v in stages.items():
                v.sort()
                out[f"trigger_{k}_ms_median"] = round(statistics.median(v), 2)
                out[f"trigger_{k}_ms_p90"] = round(v[int(len(v) * 0.9) - 1], 2)
            out.update(cpu.figures(per=args.runs, unit="run"))
        finally:
            stop.set()
            proc.join(30)
            if proc.is_alive():
                proc.kill()
            engine.dispose()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
