"""Throughput and latency of the real scheduler + LocalExecutor on SQLite (not a test).

(a) one run of N independent no-op tasks: task instances per second, trigger → run success;
(b) a chain of M no-op tasks: latency from one task's success to the next one's start.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler

DAGS = '''
from statewright.sdk import DAG, EmptyOperator, chain

with DAG("fanout", max_active_tasks=100000):
    for i in range({fanout}):
        EmptyOperator(task_id=f"t{{i}}")

with DAG("chain", max_active_tasks=100000):
    chain(*[EmptyOperator(task_id=f"c{{i}}") for i in range({chain})])
'''


def _wait_run(engine, dag_id: str, run_id: str, timeout: float) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, dag_id, run_id)
        if run.state in ("success", "failed"):
            return str(run.state)
        time.sleep(0.02)
    return "timeout"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fanout", type=int, default=1000)
    p.add_argument("--chain", type=int, default=100)
    p.add_argument("--parallelism", type=int, default=8)
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="statewright-bench-"))
    (tmp / "dags").mkdir()
    (tmp / "dags" / "bench.py").write_text(DAGS.format(fanout=args.fanout, chain=args.chain))
    engine = make_engine(f"sqlite:///{tmp / 'bench.db'}")
    migrate(engine)
    DagProcessor(engine, tmp / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=args.parallelism, views=views,
                             logs_folder=tmp / "logs")
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    out: dict[str, object] = {"benchmark": "throughput", "database": "sqlite",
                              "parallelism": args.parallelism}
    try:
        # warm-up: the task processes import the DAG file once
        with transaction(engine) as conn:
            _, rid = trigger_dag(conn, "chain", now=utcnow(), actor=Actor.USER, run_id="warmup")
        _wait_run(engine, "chain", rid, 120)

        t0 = time.perf_counter()
        with transaction(engine) as conn:
            _, rid = trigger_dag(conn, "fanout", now=utcnow(), actor=Actor.USER, run_id="fan")
        state = _wait_run(engine, "fanout", rid, 600)
        elapsed = time.perf_counter() - t0
        out["fanout_tasks"] = args.fanout
        out["fanout_state"] = state
        out["fanout_seconds"] = round(elapsed, 3)
        out["fanout_tis_per_second"] = round(args.fanout / elapsed, 1)

        with transaction(engine) as conn:
            _, rid = trigger_dag(conn, "chain", now=utcnow(), actor=Actor.USER, run_id="chain")
        out["chain_state"] = _wait_run(engine, "chain", rid, 600)
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "chain", rid)
            tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        gaps = [
            (tis[f"c{i + 1}"].start_date - tis[f"c{i}"].end_date).total_seconds() * 1000
            for i in range(args.chain - 1)
        ]
        gaps.sort()
        out["chain_tasks"] = args.chain
        out["chain_latency_ms_median"] = round(statistics.median(gaps), 2)
        out["chain_latency_ms_p95"] = round(gaps[int(len(gaps) * 0.95) - 1], 2)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
