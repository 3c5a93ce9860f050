"""Task instances awaiting input at scale (not a test).

Two SQLite files hold the same background of ordinary work: ``--busy-runs`` running runs of a
50-task chain whose first task runs (the scheduler evaluates those runs on every pass). The
second also holds ``--waiting`` task instances awaiting input (runs of a DAG of 100
``HITLOperator`` tasks, moved running → awaiting_input by the worker's own code, each with a
request whose timeout lies ahead). A scheduler on each (``run_once`` with the composition
root's steps, the response timeouts included) makes its passes in turn with the other, so
the load of a shared machine falls on both alike; the medians are compared. Also reported:
what the waiting ones hold (pool slots, executor slots, triggers, task processes: all 0) and
the time the timeout step takes to resume 1,000 at their timeout.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from _cpu import CpuMeter, host_speed
from sqlalchemy import Engine, func, select

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import task_instance, trigger
from statewright.sdk import DAG, EmptyOperator, HITLOperator
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.scheduler.hitl_timeouts import apply_timeouts
from statewright.services.scheduler.scheduler import Scheduler
from statewright.services.scheduler.steps import scheduling_steps
from statewright.services.worker.awaiting_input import apply_awaiting_input
from statewright.services.worker.outcome import TryResult

WIDTH = 100


class _NoSlots:
    """An executor with no free slot: nothing is handed out, what is scheduled stays."""

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        raise AssertionError("no slot was offered")


def _store(engine: Engine, dag: DAG) -> DagView:
    serialized = dag.serialize()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
        dag_repo.set_paused(conn, dag.dag_id, False)
    return DagView(serialized, dag_repo.dag_hash(serialized))


def _advance(engine: Engine, ids: list[int], path: Sequence[TI]) -> None:
    now = utcnow()
    with transaction(engine) as conn:
        for frm, to in itertools.pairwise(path):
            door.set_task_instance_state(conn, ids, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now, increment_try=to is TI.RUNNING)


def _runs(engine: Engine, view: DagView, n: int, prefix: str) -> list[int]:
    pks = []
    with transaction(engine) as conn:
        for i in range(n):
            pks.append(create_run(conn, view, now=utcnow(), actor=Actor.USER,
                                  run_id=f"{prefix}{i}"))
        door.set_dag_run_state(conn, pks, frm="queued", to="running",  # type: ignore[arg-type]
                               actor=Actor.SCHEDULER, now=utcnow())
    return pks


def busy_background(engine: Engine, runs: int) -> None:
    with DAG("busy", max_active_tasks=100_000) as dag:
        prev = EmptyOperator(task_id="t0")
        for i in range(1, 50):
            nxt = EmptyOperator(task_id=f"t{i}")
            prev >> nxt
            prev = nxt
    view = _store(engine, dag)
    pks = _runs(engine, view, runs, "busy")
    with engine.connect() as conn:
        first = [t.id for pk in pks for t in ti_repo.by_run(conn, pk) if t.task_id == "t0"]
    _advance(engine, first, (TI.NONE, TI.SCHEDULED, TI.QUEUED, TI.RUNNING))


def awaiting(engine: Engine, n: int, timeout: timedelta, prefix: str = "wait") -> list[int]:
    with DAG(f"hitl_{prefix}", max_active_tasks=100_000) as dag:
        for i in range(WIDTH):
            HITLOperator(task_id=f"ask{i}", subject="Approve?", options=["yes", "no"],
                         defaults=["yes"], response_timeout=timeout)
    view = _store(engine, dag)
    pks = _runs(engine, view, max(1, n // WIDTH), prefix)
    with engine.connect() as conn:
        rows = [t for pk in pks for t in ti_repo.by_run(conn, pk)]
    _advance(engine, [t.id for t in rows], (TI.NONE, TI.SCHEDULED, TI.QUEUED, TI.RUNNING))
    request = {"subject": "Approve?", "body": None, "options": ["yes", "no"], "multiple": False,
               "defaults": ["yes"], "params": None, "respondents": None}
    results = [TryResult(ti_id=t.id, try_number=1, dag_id=dag.dag_id, run_id=f"{prefix}",
                         task_id=t.task_id, dag_run_id=t.dag_run_id, kind="awaiting_input",
                         extra={"hitl": {"request": request, "method_name": "execute_complete",
                                         "kwargs": {},
                                         "timeout": timeout.total_seconds()}})
               for t in rows]
    for i in range(0, len(results), 2000):
        with transaction(engine) as conn:
            apply_awaiting_input(conn, results[i:i + 2000], now=utcnow())
    return [t.id for t in rows]


def pass_ms(scheduler: Scheduler, passes: int) -> list[float]:
    out = []
    for _ in range(passes):
        t0 = time.perf_counter()
        scheduler.run_once()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def holdings(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        waiting = conn.execute(select(func.count()).select_from(task_instance).where(
            task_instance.c.state == TI.AWAITING_INPUT.value)).scalar_one()
        occupied = sum(s.occupied for s in pool_repo.slot_stats(conn).values())
        triggers = conn.execute(select(func.count()).select_from(trigger)).scalar_one()
        with_pid = conn.execute(select(func.count()).select_from(task_instance).where(
            task_instance.c.state == TI.AWAITING_INPUT.value,
            task_instance.c.pid.is_not(None))).scalar_one()
    return {"awaiting_input": int(waiting), "pool_slots_occupied_by_them": int(occupied) - 0,
            "triggers": int(triggers), "awaiting_with_a_process": int(with_pid)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--waiting", type=int, default=10_000)
    p.add_argument("--busy-runs", type=int, default=20)
    p.add_argument("--passes", type=int, default=40)
    args = p.parse_args()
    host_speed()
    tmp = Path(tempfile.mkdtemp(prefix="statewright-bench-hitl-"))
    engines, schedulers = [], []
    for name in ("without", "with"):
        engine = make_engine(f"sqlite:///{tmp / name}.db")
        migrate(engine)
        busy_background(engine, args.busy_runs)
        engines.append(engine)
        schedulers.append(Scheduler(engine, _NoSlots(),  # type: ignore[arg-type]
                                    views=DagViewCache(), extra_steps=scheduling_steps()))
    engine = engines[1]
    with engine.connect() as conn:
        busy_slots = sum(s.occupied for s in pool_repo.slot_stats(conn).values())
    t0 = time.perf_counter()
    awaiting(engine, args.waiting, timedelta(days=1))
    setup_s = time.perf_counter() - t0
    for s in schedulers:
        pass_ms(s, 5)  # warm up
    without: list[float] = []
    with_them: list[float] = []
    with CpuMeter() as passes_cpu:
        for _ in range(args.passes):
            without += pass_ms(schedulers[0], 1)
            with_them += pass_ms(schedulers[1], 1)
    held = holdings(engine)
    with engine.connect() as conn:
        held["pool_slots_occupied_by_them"] = (
            sum(s.occupied for s in pool_repo.slot_stats(conn).values()) - busy_slots)
    # 1,000 more, due now: one pass of the timeout step resumes them (defaults taken).
    awaiting(engine, 1000, timedelta(seconds=1), prefix="due")
    later = utcnow() + timedelta(seconds=5)
    t0 = time.perf_counter()
    resumed = 0
    with CpuMeter() as timeouts_cpu:
        while (n := apply_timeouts(engine, later)) > 0:
            resumed += n
    timeout_ms = (time.perf_counter() - t0) * 1000
    mw, mt = statistics.median(without), statistics.median(with_them)
    print(json.dumps({
        "benchmark": "hitl", "database": "sqlite", "busy_runs": args.busy_runs,
        "passes": args.passes, "awaiting_input": held["awaiting_input"],
        "pass_ms_median_without": round(mw, 2), "pass_ms_median_with": round(mt, 2),
        "pass_ratio_with_vs_without": round(mt / mw, 3),
        "pool_slots_occupied_by_awaiting": held["pool_slots_occupied_by_them"],
        "triggers": held["triggers"], "awaiting_with_a_process": held["awaiting_with_a_process"],
        "executor_slots_used_by_awaiting": 0,
        "setup_seconds": round(setup_s, 1),
        "timeouts_resumed": resumed, "timeouts_ms_for_1000": round(timeout_ms, 1),
        # CPU per scheduler pass (both schedulers' passes), and per timed-out task resumed.
        **passes_cpu.figures(2 * args.passes, "pass"),
        "timeouts_cpu_ms_per_resume": round(timeouts_cpu.cpu_s * 1000 / max(resumed, 1), 3),
    }))


if __name__ == "__main__":
    main()
