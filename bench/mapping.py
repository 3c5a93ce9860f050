"""Dynamic task mapping at scale (not a test).

(a) the real scheduler + LocalExecutor on SQLite: one run of a task mapped 1,000 ways against one
    run of a static fan-out of 1,000 tasks doing the same (a no-op ``@task``): task instances per
    second, trigger → run success; the runs alternate, ``--repeats`` times each, medians shown;
(b) the expansion of one mapped task into 10,000 task instances: one transaction through the door
    (``expand_mapped_task``: the instances, their history rows, the commit), on a SQLite file;
    wall time, and the CPU time of this process (SQLite runs in it: the cost when other
    processes compete for the machine).

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
from typing import Any

from _cpu import flat, host_speed, metered, totals
from sqlalchemy import func, select
from throughput import _wait_run

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import state_transition, task_instance
from statewright.sdk import DAG, task
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import create_run, trigger_dag
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

DAGS = '''
from statewright.sdk import DAG, task

@task
def noop(i):
    return None

with DAG("mapped", max_active_tasks=100000):
    noop.expand(i=list(range({n})))

with DAG("static", max_active_tasks=100000):
    for i in range({n}):
        noop.override(task_id=f"t{{i}}")(i)

with DAG("warmup", max_active_tasks=100000):
    noop.expand(i=[1, 2])
'''


def throughput(tmp: Path, n: int, parallelism: int, repeats: int) -> dict[str, Any]:
    (tmp / "dags").mkdir()
    (tmp / "dags" / "bench.py").write_text(DAGS.format(n=n))
    engine = make_engine(f"sqlite:///{tmp / 'bench.db'}")
    migrate(engine)
    DagProcessor(engine, tmp / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=parallelism, views=views,
                             logs_folder=tmp / "logs")
    executor.start()
    scheduler = Scheduler(engine, executor, views=views,
                          config=SchedulerConfig(max_map_length=max(n, 1024)))
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    rates: dict[str, list[float]] = {"mapped": [], "static": []}
    states: dict[str, str] = {}
    try:
        with transaction(engine) as conn:
            _, rid = trigger_dag(conn, "warmup", now=utcnow(), actor=Actor.USER, run_id="w")
        _wait_run(engine, "warmup", rid, 120)
        for r in range(repeats):
            for dag_id in ("mapped", "static") if r % 2 == 0 else ("static", "mapped"):
                t0 = time.perf_counter()
                with transaction(engine) as conn:
                    _, rid = trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER,
                                         run_id=f"{dag_id}_{r}")
                states[dag_id] = _wait_run(engine, dag_id, rid, 900)
                rates[dag_id].append(n / (time.perf_counter() - t0))
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    mapped, static = statistics.median(rates["mapped"]), statistics.median(rates["static"])
    return {
        "tasks": n,
        "parallelism": parallelism,
        "repeats": repeats,
        "mapped_state": states.get("mapped"),
        "static_state": states.get("static"),
        "mapped_tis_per_second": round(mapped, 1),
        "static_tis_per_second": round(static, 1),
        "mapped_tis_per_second_runs": [round(x, 1) for x in rates["mapped"]],
        "static_tis_per_second_runs": [round(x, 1) for x in rates["static"]],
        "mapped_vs_static": round(mapped / static, 3),
    }


def expansion(tmp: Path, n: int, repeats: int) -> dict[str, Any]:
    engine = make_engine(f"sqlite:///{tmp / 'expand.db'}")
    migrate(engine)
    with DAG("expand") as dag:
        @task
        def noop(i: int) -> None:
            return None

        noop.expand(i=list(range(n)))
    serialized = dag.serialize()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
    view = DagView(serialized, dag_repo.dag_hash(serialized))
    timings: list[float] = []
    cpu: list[float] = []
    for r in range(repeats):
        with transaction(engine) as conn:
            run_pk = create_run(conn, view, now=utcnow(), actor=Actor.USER, run_id=f"r{r}")
        with engine.connect() as conn:
            ti_id = conn.execute(select(task_instance.c.id).where(
                task_instance.c.dag_run_id == run_pk)).scalar_one()
        t0, c0 = time.perf_counter(), time.process_time()
        with transaction(engine) as conn:
            created = door.expand_mapped_task(conn, ti_id, length=n, actor=Actor.SCHEDULER,
                                              now=utcnow())
        timings.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert created == n
    with engine.connect() as conn:
        history = conn.execute(select(func.count()).select_from(state_transition).where(
            state_transition.c.run_id == "r0", state_transition.c.to_state == "scheduled",
        )).scalar_one()
    return {
        "expand_instances": n,
        "expand_ms_median": round(statistics.median(timings) * 1000, 1),
        "expand_ms_runs": [round(t * 1000, 1) for t in timings],
        "expand_cpu_ms_median": round(statistics.median(cpu) * 1000, 1),
        "expand_history_rows": history,
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--expand", type=int, default=10_000)
    p.add_argument("--parallelism", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    host_speed()
    tmp = Path(tempfile.mkdtemp(prefix="statewright-bench-mapping-"))
    out: dict[str, Any] = {"benchmark": "mapping", "database": "sqlite"}
    # Per task instance: each expanded one (its run's set-up included), each mapped and each static
    # one run by the scheduler and the LocalExecutor (their set-up included).
    flat(out, "expansion", metered(None, args.expand * args.repeats, "ti", expansion, tmp,
                                   args.expand, args.repeats))
    flat(out, "throughput", metered(None, 2 * args.tasks * args.repeats, "ti", throughput,
                                    tmp, args.tasks, args.parallelism, args.repeats))
    out.update(totals(out, (args.expand + 2 * args.tasks) * args.repeats, "ti"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
