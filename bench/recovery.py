"""Recovery benchmark (not a test). Prints one JSON line.

Real processes on a private PostgreSQL (started on a free port in a temporary directory, torn down
at the end), with the chaos suite's deployment helpers and its short thresholds (printed in the
line: the figures scale with them):

- ``scheduler_restart_s``: ``kill -9`` of the only scheduler (its process group: its local
  executor and tries die with it) while tasks flow, started again at once; seconds from the kill
  to the first task instance moving again.
- ``scheduler_takeover_s``: two schedulers; one is killed (group) and not restarted; seconds until
  the survivor has taken over every task instance the dead one held (queued or running).
- ``triggerer_takeover_s``: two triggerers holding long waits; one is killed; seconds until the
  survivor owns every trigger the dead one held.
- ``postgres_converge_s``: PostgreSQL crashes (``-m immediate``) and comes back after 1 s;
  seconds from its return to the first task instance moving again.

Usage: python bench/recovery.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.chaos helpers

from _cpu import CpuMeter, host_speed
from sqlalchemy import func, select
from tests.chaos.deployment import CHAOS_SETTINGS, Deployment, wait_for
from tests.chaos.services import PrivatePostgres

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import make_engine, transaction
from statewright.db.tables import dag, job, state_transition, task_instance, trigger
from statewright.services.dag_runs import trigger_dag

DAGS = textwrap.dedent('''
    import time
    from datetime import datetime, timedelta
    from statewright.sdk import DAG, BaseOperator, task
    from statewright.sdk.triggers import TimeDeltaTrigger

    with DAG("flow", start_date=datetime(2026, 1, 1), schedule=None, max_active_tasks=8,
             default_args={"retries": 3, "retry_delay": timedelta(0)}):
        @task
        def step(i):
            time.sleep(1.0)
            return i

        step.expand(i=list(range(400)))

    class Wait(BaseOperator):
        def execute(self, context):
            self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=600)), method_name="done")

        def done(self, context, event=None):
            return 1

    with DAG("waits", start_date=datetime(2026, 1, 1), schedule=None, max_active_tasks=64):
        for i in range(40):
            Wait(task_id=f"w{i}")
''')


class Bench:
    def __init__(self, root: Path, pg: PrivatePostgres, schedulers: int, triggerers: int) -> None:
        (root / "dags").mkdir(parents=True)
        (root / "dags" / "bench.py").write_text(DAGS)
        self.dep = Deployment(root, pg.url, schedulers=schedulers, triggerers=triggerers)
        self.dep.cli("db", "migrate")
        self.engine = make_engine(pg.url)
        self.dep.start_all()
        wait_for(lambda: self._count(select(func.count()).select_from(dag)) >= 2, 60,
                 "the DAGs to load")

    def _count(self, stmt: object) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(stmt).scalar_one())  # type: ignore[call-overload]

    def trigger(self, dag_id: str) -> None:
        with transaction(self.engine) as conn:
            trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER)

    def last_move(self) -> int:
        return self._count(select(func.coalesce(func.max(state_transition.c.id), 0)).where(
            state_transition.c.entity == "task_instance"))

    def moved_since(self, mark: int) -> bool:
        return self.last_move() > mark

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.dep.terminate_all(5)
        self.dep.close()
        self.engine.dispose()


def _running(b: Bench, n: int) -> None:
    wait_for(lambda: b._count(select(func.count()).select_from(task_instance).where(
        task_instance.c.state == "running")) >= n, 60, f"{n} tries running")


def _until_moving(b: Bench, t0: float, mark: int) -> float:
    wait_for(lambda: b.moved_since(mark), 120, "a task to move", every=0.02)
    return time.monotonic() - t0


def scheduler_restart(root: Path, pg: PrivatePostgres) -> float:
    with Bench(root, pg, schedulers=1, triggerers=1) as b:
        b.trigger("flow")
        _running(b, 4)
        t0 = time.monotonic()
        b.dep.kill_group("scheduler-1")
        b.dep.start("scheduler-1")
        return _until_moving(b, t0, b.last_move())


def scheduler_takeover(root: Path, pg: PrivatePostgres) -> float:
    with Bench(root, pg, schedulers=2, triggerers=1) as b:
        b.trigger("flow")
        _running(b, 8)
        victim = b.dep.components["scheduler-1"].process
        assert victim is not None
        identity = f"local:{__import__('socket').gethostname()}:{victim.pid}"
        with b.engine.connect() as conn:
            held = set(conn.execute(select(task_instance.c.id).where(
                task_instance.c.state.in_(["queued", "running"]),
                task_instance.c.executor == identity)).scalars())
        t0 = time.monotonic()
        b.dep.kill_group("scheduler-1")

        def taken_over() -> bool:
            with b.engine.connect() as conn:
                return not conn.execute(select(func.count()).select_from(task_instance).where(
                    task_instance.c.id.in_(held),
                    task_instance.c.executor == identity,
                    task_instance.c.state.in_(["queued", "running"]))).scalar_one()

        wait_for(taken_over, 300, "the survivor to take over", every=0.05)
        return time.monotonic() - t0


def triggerer_takeover(root: Path, pg: PrivatePostgres) -> float:
    with Bench(root, pg, schedulers=1, triggerers=2) as b:
        b.trigger("waits")
        wait_for(lambda: b._count(select(func.count()).select_from(trigger).where(
            trigger.c.triggerer_id.is_not(None))) >= 40, 120, "40 triggers claimed")
        victim = b.dep.components["triggerer-1"].process
        assert victim is not None
        with b.engine.connect() as conn:
            job_id = conn.execute(select(job.c.id).where(job.c.pid == victim.pid,
                                                         job.c.job_type == "triggerer")
                                  ).scalar_one()
        t0 = time.monotonic()
        b.dep.kill_group("triggerer-1")
        wait_for(lambda: b._count(select(func.count()).select_from(trigger).where(
            trigger.c.triggerer_id == job_id)) == 0, 120, "the survivor to claim them",
            every=0.05)
        return time.monotonic() - t0


def postgres_converge(root: Path, pg: PrivatePostgres) -> float:
    with Bench(root, pg, schedulers=1, triggerers=1) as b:
        b.trigger("flow")
        _running(b, 4)
        pg.stop("immediate")
        time.sleep(1.0)
        pg.start()
        return _until_moving(b, time.monotonic(), b.last_move())


PG_ROLES = (("postgres:", "postgresql"), ("bin/postgres", "postgresql"))


def main() -> None:
    host_speed()
    figures: dict[str, object] = {"thresholds": {
        k.removeprefix("STATEWRIGHT_").lower(): v for k, v in CHAOS_SETTINGS.items()
        if k.endswith("SECONDS")}}
    cpu: dict[str, float] = {}
    for name, fn in (("scheduler_restart_s", scheduler_restart),
                     ("scheduler_takeover_s", scheduler_takeover),
                     ("triggerer_takeover_s", triggerer_takeover),
                     ("postgres_converge_s", postgres_converge)):
        pg = PrivatePostgres().start()
        try:
            # The deployment's processes and the private PostgreSQL server are all in this
            # process's tree: the scenario's CPU, set-up and tear-down included.
            with tempfile.TemporaryDirectory(prefix="statewright-recovery-") as tmp, \
                    CpuMeter(roles=PG_ROLES) as meter:
                figures[name] = round(fn(Path(tmp), pg), 2)
            cpu[name.removesuffix("_s")] = round(meter.cpu_s, 3)
        finally:
            pg.close()
    figures["cpu_s"] = round(sum(cpu.values()), 3)
    figures["cpu_ms_per_scenario"] = round(sum(cpu.values()) * 1000 / len(cpu), 3)
    figures["cpu_s_by_scenario"] = cpu
    figures.update(host_speed())
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
