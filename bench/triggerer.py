"""Triggerer benchmark (not a test). Prints one JSON line.

1. One triggerer holding N concurrent TimeDeltaTriggers, N = 1,000 / 10,000 / 50,000 (each in a
   fresh process, on SQLite): resident memory per trigger, time to claim them all, and events
   applied to the database per second when they all come due at the same moment. The set-up (a
   DAG of N tasks, one run, N deferrals through the door) runs in a child process, each phase
   timed (wall and CPU seconds), so that the triggerer's memory is measured in a fresh process.
2. 200 deferrable tasks that wait 1 s, run by the local executor, the scheduler and the
   triggerer (as `standalone` runs them: the scheduler and the triggerer are threads of this
   process, the local executor's supervisor a process of its own; SQLite): the defer → resume
   overhead per task, median =
   (running → deferred written - defer() called) + (resumed try started - trigger moment);
   defer() is called 1 s before the trigger's moment (a TimeDeltaTrigger of 1 s). A first run of
   the same DAG warms the processes; the second is measured.

Usage: python bench/triggerer.py [--sizes 1000,10000,50000] [--tasks 200] [--defer-runs 1]
                                 [--no-fire]
       python bench/triggerer.py --one 100000 [--no-fire]   (one size, printed alone)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _cpu import CpuMeter, host_speed


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- 1. many triggers in one triggerer ----------------------------------------------------------


class _Phases:
    """Wall and CPU seconds of each set-up phase (the machine is shared: CPU time tells a
    slow phase from a busy machine)."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, float]] = {}
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def done(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.out[name] = {"wall": round(wall - self._wall, 3), "cpu": round(cpu - self._cpu, 3)}
        self._wall, self._cpu = wall, cpu


def _set_up(n: int, db: str, key: str, due_in: float, phases: _Phases) -> datetime:
    """A DAG of ``n`` tasks, one run, each task instance moved through the door to running and
    then deferred on a ``DateTimeTrigger`` (``deferral.apply_waiting``, as a worker does) due
    ``due_in`` seconds after the deferrals start (on a busy machine the phases before take
    minutes: a moment fixed before them would pass during the claim). Returns the moment."""
    from sqlalchemy import select

    from statewright.core.clock import utcnow
    from statewright.core.states import TI
    from statewright.core.transitions import Actor
    from statewright.crypto import load_fernet
    from statewright.db import transition as door
    from statewright.db.engine import make_engine, transaction
    from statewright.db.migrate import migrate
    from statewright.db.repositories import dags as dag_repo
    from statewright.db.tables import task_instance
    from statewright.services.dag_runs import create_run
    from statewright.services.dag_view import DagView
    from statewright.services.worker import deferral

    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    deferral.install_cipher(load_fernet(key))
    serialized = {"dag_id": "hold", "fileloc": None,
                  "tasks": [{"task_id": f"t{i}", "upstream": [], "downstream": []}
                            for i in range(n)]}
    now = utcnow()
    phases.done("migrate")
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=now)
        phases.done("upsert_dag")
        run_pk = create_run(conn, DagView(serialized, dag_repo.dag_hash(serialized)), now=now,
                            actor=Actor.USER)
        door.set_dag_run_state(conn, run_pk, frm="queued", to="running",
                               actor=Actor.SCHEDULER, now=now)
        phases.done("create_run")
        c = task_instance.c
        rows = conn.execute(select(c.id, c.dag_id, c.run_id, c.task_id, c.dag_run_id)
                            .where(c.dag_run_id == run_pk)).all()
        ids = [r.id for r in rows]
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, ids, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now)
        door.set_task_instance_state(conn, ids, frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.EXECUTOR, now=now, increment_try=True)
    phases.done("to_running")
    due = datetime.now(UTC) + timedelta(seconds=due_in)
    _defer_all(engine, rows, due)
    phases.done("defer")
    engine.dispose()
    return due


def _set_up_elsewhere(n: int, db: str, key: str, due_in: float) -> dict[str, Any]:
    """``_set_up`` in a process of its own: the triggerer's resident memory is then measured
    in a process whose heap holds no memory freed by the set-up (it would be reused and hide
    what the triggers take)."""
    res = subprocess.run([sys.executable, __file__, "--set-up", str(n), "--db", db,
                          "--due-in", str(due_in)], check=True, capture_output=True, text=True,
                         env={**os.environ, "STATEWRIGHT_BENCH_KEY": key})
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def _defer_all(engine: Any, rows: Any, due: datetime) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.sdk.exceptions import TaskDeferred
    from statewright.sdk.runtime import _deferred
    from statewright.sdk.triggers import DateTimeTrigger
    from statewright.services.worker import deferral
    from statewright.services.worker.outcome import TryResult

    for start in range(0, len(rows), 5000):
        results = [TryResult(ti_id=r.id, try_number=1, dag_id=r.dag_id, run_id=r.run_id,
                             task_id=r.task_id, dag_run_id=r.dag_run_id, kind="deferred",
                             extra=_deferred(TaskDeferred(trigger=DateTimeTrigger(due),
                                                          method_name="execute")).extra)
                   for r in rows[start:start + 5000]]
        with transaction(engine) as conn:
            deferral.apply_waiting(conn, results, now=utcnow())


def _claim_all(job: Any, n: int) -> tuple[float, float, float]:
    """Claim until ``n`` were claimed: wall and CPU seconds, resident bytes per trigger.

    Counted by the claims, not by the triggers held: a trigger that fired is held no more, and
    on a busy machine some may come due before the last claim (waiting for ``n`` held then
    never ended: the bench ran for ever, its loop claiming nothing)."""
    import gc

    gc.collect()
    rss_before = _rss_bytes()
    started, cpu_started = time.perf_counter(), time.process_time()
    claimed = 0
    while claimed < n:
        claimed += job.run_once().claimed
    claim_seconds = time.perf_counter() - started
    claim_cpu = time.process_time() - cpu_started
    time.sleep(0.5)  # every trigger reached its first await
    gc.collect()
    return claim_seconds, claim_cpu, (_rss_bytes() - rss_before) / n


def hold_triggers(n: int, *, fire: bool = True) -> dict[str, Any]:
    from sqlalchemy import func, select

    from statewright.core.states import TI
    from statewright.crypto import generate_key, load_fernet
    from statewright.db.engine import make_engine
    from statewright.db.tables import task_instance
    from statewright.services.triggerer import TriggererConfig, TriggererJob

    logging.basicConfig(level=logging.WARNING)
    tmp = tempfile.mkdtemp(prefix="sw-bench-trig-")
    key = generate_key()
    # All triggers come due at one moment, after the claims are done (none with --no-fire).
    set_up = _set_up_elsewhere(n, f"{tmp}/bench.db", key, 10 + n / 1000 if fire else 86400)
    due = datetime.fromisoformat(set_up.pop("due"))
    engine = make_engine(f"sqlite:///{tmp}/bench.db")
    cipher = load_fernet(key)
    job = TriggererJob(engine, cipher=cipher, config=TriggererConfig(
        capacity=n + 10, poll_seconds=0.05, cleanup_every_seconds=3600,
        heartbeat_seconds=5.0))
    meter = CpuMeter(host=False).__enter__()  # the triggerer's work, not the set-up
    job.start()
    claim_seconds, claim_cpu, rss_per_trigger = _claim_all(job, n)
    claimed_before_due = datetime.now(UTC) < due
    if not fire:
        job.stop()
        meter.__exit__(None, None, None)
        engine.dispose()
        shutil.rmtree(tmp, ignore_errors=True)
        return {"triggers": n, "rss_bytes_per_trigger": round(rss_per_trigger),
                "claim_seconds": round(claim_seconds, 3), "claim_cpu_seconds": round(claim_cpu, 3),
                "set_up": set_up, **meter.figures(n, "trigger")}
    stop = threading.Event()
    thread = threading.Thread(target=job.run_forever, args=(stop,))
    thread.start()
    scheduled = 0
    while scheduled < n:
        time.sleep(0.05)
        with engine.connect() as conn:
            scheduled = conn.execute(select(func.count()).select_from(task_instance).where(
                task_instance.c.state == TI.SCHEDULED.value)).scalar_one()
    applied_at = datetime.now(UTC)
    stop.set()
    thread.join()
    meter.__exit__(None, None, None)
    engine.dispose()
    shutil.rmtree(tmp, ignore_errors=True)
    return {
        "triggers": n,
        "rss_bytes_per_trigger": round(rss_per_trigger),
        "claim_seconds": round(claim_seconds, 3),
        "claim_cpu_seconds": round(claim_cpu, 3),
        "set_up": set_up,
        "claimed_before_due": claimed_before_due,
        # (None when some came due before the last claim: they fired as they were claimed.)
        "events_applied_per_second": round(n / max((applied_at - due).total_seconds(), 1e-9))
        if claimed_before_due else None,
        # Claimed, held, fired and applied, per trigger (the 0.5 s settle and the wait for the
        # moment included: an idle triggerer's CPU).
        **meter.figures(n, "trigger"),
    }


# -- 2. defer -> resume overhead ------------------------------------------------------------

DAG_FILE = textwrap.dedent('''
    from datetime import timedelta
    from statewright.sdk import DAG, BaseOperator
    from statewright.sdk.triggers import TimeDeltaTrigger

    class Waiter(BaseOperator):
        def execute(self, context):
            self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=1)), method_name="done")

        def done(self, context, event=None):
            return event

    with DAG("bench_defer", max_active_tasks={n}):
        for i in range({n}):
            Waiter(task_id=f"w{{i}}")
''')


def defer_resume(n_tasks: int) -> dict[str, Any]:
    from statewright.core.clock import utcnow
    from statewright.core.transitions import Actor
    from statewright.crypto import generate_key, load_fernet
    from statewright.db.engine import make_engine, transaction
    from statewright.db.migrate import migrate
    from statewright.db.repositories import dags as dag_repo
    from statewright.db.repositories import runs as run_repo
    from statewright.db.repositories import task_instances as ti_repo
    from statewright.db.repositories import transitions_log
    from statewright.db.repositories import xcoms as xcom_repo
    from statewright.sdk.loader import load_dag_file
    from statewright.services.dag_runs import trigger_dag
    from statewright.services.dag_view import DagViewCache
    from statewright.services.executors.local import LocalExecutor
    from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
    from statewright.services.triggerer import TriggererConfig, TriggererJob
    from statewright.services.worker import deferral

    logging.basicConfig(level=logging.WARNING)
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-defer-"))
    (tmp / "bench_defer.py").write_text(DAG_FILE.format(n=n_tasks))
    engine = make_engine(f"sqlite:///{tmp}/bench.db")
    migrate(engine)
    cipher = load_fernet(generate_key())
    deferral.install_cipher(cipher)
    loaded = load_dag_file(tmp / "bench_defer.py")
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, loaded.dags["bench_defer"].serialize(), now=utcnow())
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=8, views=views)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views, config=SchedulerConfig(idle_seconds=1.0))
    triggerer = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=1.0))
    stop = threading.Event()
    threads = [threading.Thread(target=scheduler.run_forever, args=(stop,)),
               threading.Thread(target=triggerer.run_forever, args=(stop,))]
    for t in threads:
        t.start()
    def run_to_end() -> tuple[int, str]:
        with transaction(engine) as conn:
            run_pk, _ = trigger_dag(conn, "bench_defer", now=utcnow(), actor=Actor.USER)
        while True:
            with engine.connect() as conn:
                state = run_repo.get(conn, run_pk).state
            if state in ("success", "failed"):
                return run_pk, state
            time.sleep(0.05)

    # A first run warms the processes (each compiles its statements once, the task processes
    # import the DAG file): the measured run is what a deployment that has run before pays.
    run_to_end()
    meter = CpuMeter(host=False).__enter__()
    started = time.perf_counter()
    run_pk, state = run_to_end()
    wall = time.perf_counter() - started
    meter.__exit__(None, None, None)
    stop.set()
    for t in threads:
        t.join()
    executor.stop()
    overheads: list[float] = []
    parts: dict[str, list[float]] = {"store_deferral": [], "fire": [], "scheduler_queue": [],
                                     "executor_start": []}
    timeline: list[tuple[datetime, ...]] = []  # each task: asked, deferred, fired, queued, ran
    with engine.connect() as conn:
        tis = ti_repo.by_run(conn, run_pk)
        moments = xcom_repo.get_return_values(conn, [(run_pk, t.task_id) for t in tis])
        for t in tis:
            hist = transitions_log.for_task_instance(conn, t.id)
            runs = [h.at for h in hist if h.to_state == "running"]
            assert len(runs) == 2, "each task runs twice: execute, then the resume"
            deferred_at = next(h.at for h in hist if h.to_state == "deferred")
            moment = datetime.fromisoformat(moments[(run_pk, t.task_id)])
            # The trigger's moment is 1 s after the task called defer(): the overhead is the
            # time to store the deferral plus the time from the moment to the resumed start.
            asked = moment - timedelta(seconds=1)
            overheads.append((deferred_at - asked).total_seconds()
                             + (runs[1] - moment).total_seconds())
            fired = next(h.at for h in hist if h.from_state == "deferred")
            queued = [h.at for h in hist if h.to_state == "queued"][-1]
            parts["store_deferral"].append((deferred_at - asked).total_seconds())
            parts["fire"].append((fired - moment).total_seconds())
            parts["scheduler_queue"].append((queued - fired).total_seconds())
            parts["executor_start"].append((runs[1] - queued).total_seconds())
            timeline.append((asked, deferred_at, moment, fired, queued, runs[1]))
    engine.dispose()
    shutil.rmtree(tmp, ignore_errors=True)
    return {"tasks": n_tasks, "state": state, "wall_seconds": round(wall, 3),
            "defer_resume_overhead_ms_median": round(statistics.median(overheads) * 1000, 1),
            "defer_resume_overhead_ms_p90": round(
                statistics.quantiles(overheads, n=10)[-1] * 1000, 1),
            "median_ms_by_step": {k: round(statistics.median(v) * 1000, 1)
                                  for k, v in parts.items()},
            **({"per_task_ms": _per_task(timeline)} if n_tasks <= 50 else {}),
            # Scheduler, triggerer (threads here), executor and task processes; per task
            # instance run, deferred and resumed.
            **meter.figures(n_tasks, "ti")}


def _per_task(timeline: list[tuple[datetime, ...]]) -> list[dict[str, float]]:
    """Each task's steps, by the moment it asked to defer: when it asked (from the first
    task's asking), then each step's milliseconds (where a wave's tasks wait shows here)."""
    first = min(t[0] for t in timeline)
    ms = lambda a, b: round((b - a).total_seconds() * 1000, 1)  # noqa: E731
    return [{"asked_at": ms(first, asked), "store_deferral": ms(asked, deferred),
             "fire": ms(moment, fired), "scheduler_queue": ms(fired, queued),
             "executor_start": ms(queued, ran)}
            for asked, deferred, moment, fired, queued, ran in sorted(timeline)]


def _defer_resume_runs(n_tasks: int, runs: int) -> dict[str, Any]:
    """Part 2 ``runs`` times, each in fresh processes: the first run's figures, the median
    overhead of every run and the median of those (one run's figure moves by half with what the
    host does meanwhile)."""
    results = []
    for _ in range(runs):
        res = subprocess.run([sys.executable, __file__, "--defer", str(n_tasks)], check=True,
                             capture_output=True, text=True)
        results.append(json.loads(res.stdout.strip().splitlines()[-1]))
    out = dict(results[0])
    if runs > 1:
        medians = [r["defer_resume_overhead_ms_median"] for r in results]
        out["overhead_ms_median_runs"] = medians
        out["overhead_ms_median_of_runs"] = round(statistics.median(medians), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--defer-runs", type=int, default=1,
                        help="measure defer → resume this many times (fresh processes each)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-fire", action="store_true",
                        help="hold and claim only: skip the moment they all fire")
    parser.add_argument("--defer", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--set-up", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--due-in", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.set_up:
        phases = _Phases()
        due = _set_up(args.set_up, args.db, os.environ["STATEWRIGHT_BENCH_KEY"], args.due_in,
                      phases)
        print(json.dumps({**phases.out, "due": due.isoformat()}))
        return
    if args.one:  # also run alone: a line of its own, with the host's speed
        host = host_speed()
        print(json.dumps({**hold_triggers(args.one, fire=not args.no_fire), **host}))
        return
    if args.defer:
        print(json.dumps(defer_resume(args.defer)))
        return
    host_speed()
    out: dict[str, Any] = {"bench": "triggerer", "holding": []}
    for n in [int(x) for x in args.sizes.split(",") if x]:
        res = subprocess.run([sys.executable, __file__, "--one", str(n),
                              *(["--no-fire"] if args.no_fire else [])], check=True,
                             capture_output=True, text=True)
        out["holding"].append(json.loads(res.stdout.strip().splitlines()[-1]))
    out["defer_resume"] = _defer_resume_runs(args.tasks, args.defer_runs)
    # The line's CPU: the holdings' (per trigger) and the defer → resume run's (per task).
    parts = [*out["holding"], out["defer_resume"]]
    out["cpu_s"] = round(sum(p["cpu_s"] for p in parts), 3)
    out["cpu_ms_per_trigger"] = round(out["cpu_s"] * 1000 / sum(
        p.get("triggers", p.get("tasks", 0)) for p in parts), 3)
    out.update(host_speed())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
