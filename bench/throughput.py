"""Throughput and latency of the real scheduler + LocalExecutor (not a test).

(a) runs of N independent no-op tasks (``--join``: and one task downstream of all), one per
    size of ``--sizes`` (each a DAG of its own, one after the other): task instances per
    second, trigger → run success, and the ratio of the last size's figure to the first's
    (does the cost per task instance grow with the run?);
(b) a chain of M no-op tasks: latency from one task's success to the next one's start.

SQLite by default; ``--database-url postgresql://…`` runs on a fresh database created on that
server (and dropped at the end). ``--schedulers N`` runs N schedulers, each in a process of its
own with its own LocalExecutor of ``--parallelism`` task processes, as N scheduler machines
would (PostgreSQL only: on SQLite one scheduler per file). ``--compare-schedulers`` runs the
whole workload with one scheduler, then with ``--schedulers`` (2 unless given), on fresh
databases, and adds the ratio of their fan-out figures; ``--pairs N`` does that N times,
alternating which side goes first, and gives the median of the pairs' ratios. Each pair also
gives the ratio of the task processes' CPU (the same tries on both sides: how much dearer the
host made a CPU second beside several schedulers' executors) and the schedulers' ratio with
that divided out (``scheduler_processes_cpu_ratio_same_host``).

``--task noop`` (the default) makes every task a no-op ``@task`` (a try in a task process);
``--task empty`` an ``EmptyOperator``, which the scheduler sets to success itself, without an
executor (Airflow's semantics): the two measure the pipeline and the scheduler alone.

With several schedulers, ``by_scheduler`` gives per scheduler process (with its executor) the
task instances of the fan-out it queued (the ``executor`` each was queued for) and its own CPU
seconds (its task processes are not in it), and that CPU less its idle rate (measured for
``--idle-seconds`` before the fan-outs: the loop's timer passes and steps) times the fan-out's
wall time: on a busy host the wall time, and with it the idle cost of each process, grows
several-fold. ``scheduled_twice`` counts task instances that went to ``scheduled`` or
``queued`` more than once in the history (0: no double scheduling).

Before the figures, a warm-up run starts a try in every task process, so each has imported the
DAG file once (a task process loads its DAG file once and keeps it). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _cpu import CpuMeter, _read_stat, host_speed
from sqlalchemy import create_engine, text

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag

DAGS = '''
import time
from statewright.sdk import DAG, EmptyOperator, PythonOperator, chain, task


@task
def noop():
    return None


def make(task_id):
    return EmptyOperator(task_id=task_id) if {empty} else noop.override(task_id=task_id)()


with DAG("warm", max_active_tasks=100000):
    for i in range({warm}):
        PythonOperator(task_id=f"w{{i}}", python_callable=lambda: time.sleep(0.2))

for n in {sizes}:
    with DAG(f"fanout_{{n}}", max_active_tasks=100000):
        tasks = [make(f"t{{i}}") for i in range(n)]
        if {join}:
            tasks >> make("join")

with DAG("chain", max_active_tasks=100000):
    chain(*[make(f"c{{i}}") for i in range({chain})])
'''


# A scheduler process of this benchmark (with its executor) is a spawned multiprocessing child.
ROLES = (("multiprocessing.spawn", "scheduler"),)


def _wait_run(engine: Any, dag_id: str, run_id: str, timeout: float) -> str:
    """Poll the run's state: one kept connection and one small read per poll, every 20 ms at
    first and then at most every 0.5 % of the time waited so far, up to 0.1 s (this process's
    CPU is in the figures: a checkout and a whole-row read every 20 ms cost 0.3 ms per task
    instance of a fan-out of 2,000 on a busy host)."""
    started = time.monotonic()
    deadline = started + timeout
    read = text("SELECT state FROM dag_run WHERE dag_id = :d AND run_id = :r")
    with engine.connect() as conn:
        while time.monotonic() < deadline:
            state = conn.execute(read, {"d": dag_id, "r": run_id}).scalar()
            conn.rollback()  # the next read sees what committed since
            if state in ("success", "failed"):
                return str(state)
            time.sleep(min(0.1, 0.02 + 0.005 * (time.monotonic() - started)))
    return "timeout"


def _trigger_and_wait(engine: Any, dag_id: str, run_id: str, timeout: float
                      ) -> tuple[str, float]:
    t0 = time.perf_counter()
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER, run_id=run_id)
    state = _wait_run(engine, dag_id, run_id, timeout)
    return state, time.perf_counter() - t0


def _scheduler_main(url: str, logs: str, parallelism: int, stop: Any, ready: Any,
                    queue_depth: int | None = None) -> None:
    """One scheduler with its LocalExecutor, in a process of its own (a scheduler machine)."""
    import threading

    from statewright.services.dag_view import DagViewCache
    from statewright.services.executors.local import LocalExecutor
    from statewright.services.scheduler.scheduler import Scheduler
    from statewright.services.scheduler.steps import scheduling_steps

    engine = make_engine(url)
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=parallelism, views=views,
                             logs_folder=Path(logs), queue_depth=queue_depth)
    executor.start()
    # With the scheduling steps, as ``statewright scheduler`` runs it.
    scheduler = Scheduler(engine, executor, views=views, extra_steps=scheduling_steps())
    done = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(done,), daemon=True)
    thread.start()
    ready.set()
    stop.wait()
    done.set()
    thread.join(10)
    executor.stop()
    engine.dispose()


@contextlib.contextmanager
def _database(url: str | None, tmp: Path) -> Iterator[str]:
    """SQLite in ``tmp``, or a fresh PostgreSQL database on the server of ``url``."""
    if not url:
        yield f"sqlite:///{tmp / 'bench.db'}"
        return
    admin_url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    name = f"statewright_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_workload(args: argparse.Namespace, schedulers: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="statewright-bench-"))
    (tmp / "dags").mkdir()
    warm = 2 * args.parallelism * schedulers
    (tmp / "dags" / "bench.py").write_text(
        DAGS.format(warm=warm, sizes=tuple(args.sizes), chain=args.chain, join=args.join,
                    empty=args.task == "empty"))
    out: dict[str, Any] = {"schedulers": schedulers}
    with _database(args.database_url, tmp) as url:
        engine = make_engine(url)
        migrate(engine)
        DagProcessor(engine, tmp / "dags").run_once()
        ctx = mp.get_context("spawn")
        stop = ctx.Event()
        procs = []
        for _ in range(schedulers):
            ready = ctx.Event()
            p = ctx.Process(target=_scheduler_main,
                            args=(url, str(tmp / "logs"), args.parallelism, stop, ready,
                                  args.queue_depth))
            p.start()
            ready.wait(120)
            procs.append(p)
        try:
            out["warmup_state"], _ = _trigger_and_wait(engine, "warm", "warmup", 300)
            idle = _idle_rates(procs, args.idle_seconds)
            fan: dict[str, Any] = {}
            for n in args.sizes:
                runs = [_fan_out(args, engine, procs, idle, n, f"fan{i}" if i else "fan")
                        for i in range(args.repeat)]
                fan[str(n)] = _median_run(runs)
            out["fanout"] = fan
            if len(args.sizes) > 1:
                first, last = fan[str(args.sizes[0])], fan[str(args.sizes[-1])]
                out["ratio_last_to_first"] = round(
                    last["tis_per_second"] / first["tis_per_second"], 3)
                # Linearity: CPU per task instance of the largest over the smallest. A host
                # runs a short burst faster than a sustained load: give the largest size first
                # (``--sizes 100000,1000``) to measure both in the same state.
                big, small = str(max(args.sizes)), str(min(args.sizes))
                out["cpu_ratio_largest_to_smallest"] = round(
                    fan[big]["cpu_ms_per_ti"] / fan[small]["cpu_ms_per_ti"], 3)
            if args.chain > 1:
                with CpuMeter(args.database_url, ROLES) as cpu:
                    out.update(_chain(engine, args.chain, args.timeout))
                out["chain_cpu_s"] = round(cpu.cpu_s, 3)
                out["chain_cpu_ms_per_ti"] = round(cpu.cpu_s * 1000 / args.chain, 3)
        finally:
            stop.set()
            for p in procs:
                p.join(30)
                if p.is_alive():
                    p.kill()
            engine.dispose()
    return out


def _fan_out(args: argparse.Namespace, engine: Any, procs: list[Any], idle: dict[int, float],
             n: int, run_id: str) -> dict[str, Any]:
    before = _own_cpu(procs)
    with CpuMeter(args.database_url, ROLES) as cpu:
        state, elapsed = _trigger_and_wait(engine, f"fanout_{n}", run_id, args.timeout)
    return {"state": state, "seconds": round(elapsed, 3),
            "tis_per_second": round(n / elapsed, 1), **cpu.figures(per=n, unit="ti"),
            **_by_scheduler(engine, f"fanout_{n}", procs, before, idle, elapsed, run_id)}


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's figures as they were; of several (``--repeat``), the run of the median CPU
    per task instance, with every run's CPU per task instance and wall rate beside it."""
    if len(runs) == 1:
        return runs[0]
    ordered = sorted(runs, key=lambda r: r["cpu_ms_per_ti"])
    cpu = [r["cpu_ms_per_ti"] for r in runs]
    return {**ordered[(len(ordered) - 1) // 2], "repeats": len(runs),
            "cpu_ms_per_ti_runs": cpu, "cpu_ms_per_ti_median": round(statistics.median(cpu), 3),
            "tis_per_second_runs": [r["tis_per_second"] for r in runs],
            "states": [r["state"] for r in runs]}


def _own_cpu(procs: list[Any]) -> dict[int, float]:
    """Each scheduler process's own CPU seconds (its threads: scheduler and executor; not its
    task processes), by pid."""
    out = {}
    for p in procs:
        stat = _read_stat(p.pid)
        out[p.pid] = stat.own if stat is not None else 0.0
    return out


def _idle_rates(procs: list[Any], seconds: float) -> dict[int, float]:
    """Each scheduler process's CPU seconds per second while no run is running (its loop's
    timer passes and steps, its executor's threads): a cost that grows with the wall time,
    not with the work."""
    if seconds <= 0:
        return {}
    before, started = _own_cpu(procs), time.monotonic()
    time.sleep(seconds)
    after, took = _own_cpu(procs), time.monotonic() - started
    return {pid: (after[pid] - before[pid]) / took for pid in after}


def _by_scheduler(engine: Any, dag_id: str, procs: list[Any], before: dict[int, float],
                  idle: dict[int, float], elapsed: float, run_id: str = "fan"
                  ) -> dict[str, Any]:
    """Per scheduler: the fan-out's task instances it queued and its CPU over the fan-out
    (``less_idle``: less its idle rate times the fan-out's wall time, the CPU of the work);
    and how many task instances the history shows scheduled or queued more than once."""
    after = _own_cpu(procs)
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, dag_id, run_id)
        queued = Counter(t.executor for t in ti_repo.by_run(conn, run.id))
        history = transitions_log.for_run(conn, dag_id, run_id)
    moves = Counter((h.task_id, h.map_index, h.to_state) for h in history
                    if h.entity == "task_instance" and h.to_state in ("scheduled", "queued"))
    by = [{"pid": p.pid, "queued": sum(k for e, k in queued.items()
                                       if e and e.endswith(f":{p.pid}")),
           "cpu_s": round(after[p.pid] - before.get(p.pid, 0.0), 3),
           "idle_cpu_ms_per_s": round(idle.get(p.pid, 0.0) * 1000, 2)} for p in procs]
    for b in by:
        b["cpu_s_less_idle"] = round(b["cpu_s"] - b["idle_cpu_ms_per_s"] * elapsed / 1000, 3)
    return {"by_scheduler": by, "schedulers_cpu_s": round(sum(b["cpu_s"] for b in by), 3),
            "schedulers_cpu_s_less_idle": round(sum(b["cpu_s_less_idle"] for b in by), 3),
            "scheduled_twice": sum(1 for k in moves.values() if k > 1)}


def _chain(engine: Any, length: int, timeout: float) -> dict[str, Any]:
    state, _ = _trigger_and_wait(engine, "chain", "chain", timeout)
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, "chain", "chain")
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        history = transitions_log.for_run(conn, "chain", "chain")
    gaps = sorted(
        (tis[f"c{i + 1}"].start_date - tis[f"c{i}"].end_date).total_seconds() * 1000
        for i in range(length - 1))
    return {"chain_state": state, "chain_tasks": length,
            "chain_latency_ms_median": round(statistics.median(gaps), 2),
            "chain_latency_ms_p95": round(gaps[max(0, int(len(gaps) * 0.95) - 1)], 2),
            "chain_link_stages_ms_median": _link_stages(history, length)}


def _link_stages(history: list[Any], length: int) -> dict[str, float]:
    """Where a link's time goes, from the history's times (each the writer's clock when its
    transaction began): upstream success → the scheduler's pass that scheduled the downstream
    began, → that pass queued it, → its try started."""
    at: dict[tuple[str | None, str], Any] = {}
    for h in history:
        if h.entity == "task_instance":
            at.setdefault((h.task_id, h.to_state), h.at)
    stages: dict[str, list[float]] = {"to_scheduled": [], "to_queued": [], "to_running": []}
    for i in range(length - 1):
        up, down = f"c{i}", f"c{i + 1}"
        marks = [at.get((up, "success")), at.get((down, "scheduled")),
                 at.get((down, "queued")), at.get((down, "running"))]
        if any(m is None for m in marks):
            continue
        for name, a, b in zip(stages, marks, marks[1:], strict=False):
            stages[name].append((b - a).total_seconds() * 1000)
    return {k: round(statistics.median(v), 2) for k, v in stages.items() if v}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1000],
                   help="fan-out sizes, comma-separated (e.g. 1000,10000)")
    p.add_argument("--fanout", type=int, help="one fan-out size (same as --sizes N)")
    p.add_argument("--join", action="store_true",
                   help="each fan-out ends in one task downstream of all (a fan-in)")
    p.add_argument("--chain", type=int, default=100)
    p.add_argument("--parallelism", type=int, default=8)
    p.add_argument("--database-url", help="a PostgreSQL server (postgresql://…); a fresh "
                   "database is created on it for the run. Default: SQLite in a temp folder")
    p.add_argument("--queue-depth", type=int, default=None,
                   help="tries each executor holds beyond its processes (default: as many)")
    p.add_argument("--task", choices=("noop", "empty"), default="noop",
                   help="every task a no-op @task (a try in a task process; the default), or "
                   "an EmptyOperator (set to success by the scheduler, no executor)")
    p.add_argument("--schedulers", type=int, default=1)
    p.add_argument("--idle-seconds", type=float, default=5.0,
                   help="seconds to measure each scheduler process's idle CPU rate before "
                   "the fan-outs (0: not measured)")
    p.add_argument("--compare-schedulers", action="store_true",
                   help="run with 1 scheduler, then with --schedulers (default 2); add the ratio")
    p.add_argument("--pairs", type=int, default=1,
                   help="with --compare-schedulers: this many pairs of runs, alternated (one "
                   "scheduler then several, then several then one, …); the ratios are the "
                   "medians of the pairs'")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--repeat", type=int, default=1,
                   help="run each fan-out this many times (new runs of the same DAG, the same "
                   "processes): the median run's figures, every run's CPU per task instance "
                   "beside them (one run's figure moves 10-20%% on a shared host)")
    args = p.parse_args()
    args.repeat = max(1, args.repeat)
    if args.fanout:
        args.sizes = [args.fanout]
    host_speed()  # the host's speed, before any work
    out: dict[str, Any] = {"benchmark": "throughput",
                           "database": "postgresql" if args.database_url else "sqlite",
                           "parallelism": args.parallelism, "join": args.join,
                           "task": args.task}
    if args.compare_schedulers:
        out.update(_compare_schedulers(args, args.schedulers if args.schedulers > 1 else 2))
    else:
        out.update(run_workload(args, args.schedulers))
    out.update(_headline(out.get("one") or out))
    out.update(host_speed())
    print(json.dumps(out))


def _compare_schedulers(args: argparse.Namespace, many: int) -> dict[str, Any]:
    """One scheduler against ``many`` on the same fan-outs, in ``args.pairs`` pairs of runs
    alternated so that a host getting busier or quieter weighs on both sides alike.

    Besides the raw ratios, each pair gives the task processes' CPU per task instance of the
    two sides: the same tries, which the number of schedulers does not change. Their ratio is
    how much dearer the host made a CPU second on the side of several schedulers (on two
    cores, a second scheduler's executor puts twice the task processes beside them), and
    ``scheduler_processes_cpu_ratio_same_host`` divides it out of the schedulers' ratio."""
    last = str(args.sizes[-1])
    pairs: list[dict[str, Any]] = []
    for i in range(max(1, args.pairs)):
        order = (1, many) if i % 2 == 0 else (many, 1)
        arms = {n: run_workload(args, n) for n in order}
        one, several = arms[1]["fanout"][last], arms[many]["fanout"][last]
        pair: dict[str, Any] = {"one": arms[1], "several": arms[many]}
        pair["schedulers_ratio"] = round(several["tis_per_second"] / one["tis_per_second"], 3)
        # The CPU of all processes for the same fan-out: several schedulers over one.
        pair["schedulers_cpu_ratio"] = round(several["cpu_s"] / max(one["cpu_s"], 1e-9), 3)
        # The schedulers' own CPU: their sum over one scheduler's.
        for key in ("schedulers_cpu_s", "schedulers_cpu_s_less_idle"):
            name = key.replace("schedulers_cpu_s", "scheduler_processes_cpu_ratio")
            pair[name] = round(several[key] / max(one[key], 1e-9), 3)
        tasks = (one["cpu_s_by_role"].get("tasks", 0.0),
                 several["cpu_s_by_role"].get("tasks", 0.0))
        if min(tasks) > 0:
            pair["task_processes_cpu_ratio"] = round(tasks[1] / tasks[0], 3)
            pair["scheduler_processes_cpu_ratio_same_host"] = round(
                pair["scheduler_processes_cpu_ratio_less_idle"]
                / pair["task_processes_cpu_ratio"], 3)
        pairs.append(pair)
    out: dict[str, Any] = {"one": pairs[0]["one"], "several": pairs[0]["several"]}
    for key in [k for k in pairs[0] if k not in ("one", "several")]:
        values = [p[key] for p in pairs if key in p]
        out[key] = round(statistics.median(values), 3)
        if len(pairs) > 1:
            out[f"{key}_pairs"] = values
    return out


def _headline(workload: dict[str, Any]) -> dict[str, Any]:
    """``cpu_s`` / ``cpu_ms_per_ti`` of the line: the fan-outs' together."""
    fan = workload.get("fanout", {})
    cpu = sum(f["cpu_s"] for f in fan.values())
    tis = sum(int(n) for n in fan)
    return {"cpu_s": round(cpu, 3), "cpu_ms_per_ti": round(cpu * 1000 / max(tis, 1), 3)}


if __name__ == "__main__":
    main()
