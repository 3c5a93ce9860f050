"""The scheduler's evaluation of one running run, alone (not a test).

A run half done is evaluated again and again (each time in a transaction rolled back), as the
scheduler evaluates a run on each pass while it has task instances waiting in ``none``:

- ``chain``: a chain of N tasks, the first half succeeded, the next one running;
- ``join``: N tasks (half succeeded, half running) and one task downstream of all of them.

For each, the median CPU time of the evaluation of the run read whole (the first evaluation, or
one every ``full_every``): reading its task instances into the scheduler's index (``read_ms``)
and the evaluation itself (``evaluate_ms``: trigger rules, due retries, the run's state); and of
the evaluation on every other pass (``changed_ms``): one running task instance has just
succeeded, and the index reads that from the history and weighs what it changed. SQLite in a
temporary folder. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from typing import Any

from _cpu import CpuMeter
from sqlalchemy import text

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, chain, task
from statewright.services.dag_processor.sync import FileSync, ImportOutcome
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.scheduler.evaluation import RunWork, schedule_run
from statewright.services.scheduler.run_index import RunIndex
from statewright.services.scheduler.scheduler import Scheduler

NOW = datetime(2026, 3, 1, tzinfo=UTC)


class _NoExecutor:
    identity = "none"

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Any) -> None:
        pass


@task
def _noop() -> None:
    """A task the scheduler schedules and queues (an EmptyOperator it would set to success)."""
    return None


def _run(engine: Any, dag_id: str, n: int, shape: str) -> int:
    with DAG(dag_id, max_active_tasks=1_000_000) as dag:
        tasks = [_noop.override(task_id=f"t{i}")() for i in range(n)]
        if shape == "chain":
            chain(*tasks)
        else:
            tasks >> _noop.override(task_id="join")()
    fileloc = f"/bench/{dag_id}.py"
    with transaction(engine) as conn:
        FileSync(conn, now=NOW, folder_prefix="/bench/", present_files={fileloc},
                 paused_at_creation=False).file(
            fileloc, ImportOutcome(fileloc, dags=[dag.serialize()]), mtime=0.0, size=0,
            content_hash=dag_id)
        dag_repo.set_paused(conn, dag_id, False)
        trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r")
        run_pk = int(conn.execute(text("SELECT id FROM dag_run WHERE dag_id = :d"),
                                  {"d": dag_id}).scalar_one())
        # Set-up of the benchmark's starting point, not a scheduling decision.
        conn.execute(text("UPDATE dag_run SET state = 'running' WHERE id = :r"), {"r": run_pk})
        done = [f"t{i}" for i in range(n // 2)]
        rest = "running"
        conn.execute(text("UPDATE task_instance SET state = 'success' WHERE dag_run_id = :r "
                          "AND task_id IN (SELECT value FROM json_each(:ids))"),
                     {"r": run_pk, "ids": json.dumps(done)})
        waiting = [f"t{n // 2}"] if shape == "chain" else [f"t{i}" for i in range(n // 2, n)]
        conn.execute(text(f"UPDATE task_instance SET state = '{rest}' WHERE dag_run_id = :r "
                          "AND task_id IN (SELECT value FROM json_each(:ids))"),
                     {"r": run_pk, "ids": json.dumps(waiting)})
    return run_pk


def measure(engine: Any, n: int, shape: str, repeat: int) -> dict[str, Any]:
    dag_id = f"{shape}_{n}"
    run_pk = _run(engine, dag_id, n, shape)
    scheduler = Scheduler(engine, _NoExecutor(), views=DagViewCache())  # type: ignore[arg-type]
    with engine.connect() as conn:
        dag_hash = dag_repo.get_hashes(conn, [dag_id])[dag_id]
        view = scheduler._view(conn, dag_id, dag_hash)
        ending = conn.execute(text("SELECT id FROM task_instance WHERE dag_run_id = :r AND "
                                   "task_id = :t"), {"r": run_pk, "t": f"t{n // 2}"}).scalar()
    reads, evaluations, changed = [], [], []
    for _ in range(repeat):
        with engine.connect() as conn:
            tx = conn.begin()
            t0 = time.process_time()
            index = scheduler.index = RunIndex()
            entry = index.entries_for(conn, {run_pk: view})[run_pk]
            t1 = time.process_time()
            schedule_run(scheduler, conn, RunWork(run_pk, dag_id, view, entry), NOW)
            t2 = time.process_time()
            tx.rollback()
            tx = conn.begin()
            index = scheduler.index = RunIndex()
            index.entries_for(conn, {run_pk: view})  # what the passes before read
            door.set_task_instance_state(conn, ending, frm=TI.RUNNING, to=TI.SUCCESS,
                                         actor=Actor.WORKER, now=NOW)
            t3 = time.process_time()
            entry = index.entries_for(conn, {run_pk: view})[run_pk]
            schedule_run(scheduler, conn, RunWork(run_pk, dag_id, view, entry), NOW)
            t4 = time.process_time()
            tx.rollback()
        reads.append(t1 - t0)
        evaluations.append(t2 - t1)
        changed.append(t4 - t3)
    return {"read_ms": round(statistics.median(reads) * 1000, 3),
            "evaluate_ms": round(statistics.median(evaluations) * 1000, 3),
            "changed_ms": round(statistics.median(changed) * 1000, 3)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")],
                   default=[100, 1000, 10000])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    engine = make_engine(f"sqlite:///{tempfile.mkdtemp(prefix='statewright-bench-')}/b.db")
    migrate(engine)
    out: dict[str, Any] = {"benchmark": "evaluation", "database": "sqlite"}
    with CpuMeter() as meter:
        for shape in ("chain", "join"):
            out[shape] = {str(n): measure(engine, n, shape, args.repeat) for n in args.sizes}
    # Per task instance evaluated: each repeat evaluates the run twice (as is, and after one
    # task instance changed); the run's set-up is included.
    out.update(meter.figures(2 * 2 * args.repeat * sum(args.sizes), "ti"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
