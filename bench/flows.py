"""Flow runs with every state persisted synchronously (not a test).

(a) a flow calling 1,000 no-op tasks one after another: milliseconds per chained call;
(b) a flow submitting 1,000 no-op tasks at once and waiting for them: task runs per second.
Each task run stores Pending, Running and Completed (three history rows) before its call
returns. The states go through the recorder process (``--backend recorder``, the default: the
flow's process holds no database session) or a recorder in this process (``--backend inline``).

``--durable`` runs both flows with ``durable=True``: each completed call's result is recorded
with its final state (one more row per call, in the same transaction), the cost of being
resumable after a crash.

Prints one JSON line. SQLite in a temporary directory unless ``--database-url`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _cpu import CpuMeter, host_speed
from sqlalchemy import func, select

from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.db.tables import state_transition, task_instance
from statewright.flows import ThreadPoolTaskRunner, flow, task, use_backend, wait
from statewright.services.flows.recorder import DbBackend


@task
def noop(i: int) -> int:
    return i


@flow
def chained(n: int) -> int:
    v = 0
    for _ in range(n):
        v = noop(v)
    return v


@flow
def fanned(n: int) -> int:
    futures = [noop.submit(i) for i in range(n)]
    wait(futures)
    return len(futures)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--database-url")
    parser.add_argument("--backend", choices=("recorder", "inline"), default="recorder")
    parser.add_argument("--durable", action="store_true",
                        help="run the flows with durable=True (results recorded per call)")
    parser.add_argument("--workers", type=int, default=None,
                        help="threads of the fanned-out flow's task runner (default: Prefect's)")
    args = parser.parse_args()
    host_speed()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        engine = make_engine(url)
        migrate(engine)
        os.environ["STATEWRIGHT_DATABASE_URL"] = url
        os.environ["STATEWRIGHT_FLOWS_BACKEND"] = "recorder"
        if args.backend == "inline":
            use_backend(lambda: DbBackend(engine))
        n = args.tasks
        os.environ["STATEWRIGHT_HOME"] = tmp  # results that are not JSON go to files here
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")  # no console line per call
        chain = chained.with_options(durable=args.durable)
        t0 = time.perf_counter()
        with CpuMeter(args.database_url) as chain_cpu:  # with the recorder processes
            chain(n)
        chain_s = time.perf_counter() - t0
        fan = fanned.with_options(task_runner=ThreadPoolTaskRunner(max_workers=args.workers),
                                  durable=args.durable)
        t0 = time.perf_counter()
        with CpuMeter(args.database_url) as fan_cpu:
            fan(n)
        fan_s = time.perf_counter() - t0
        with engine.connect() as conn:
            tis = conn.execute(select(func.count()).select_from(task_instance)).scalar_one()
            rows = conn.execute(select(func.count()).select_from(state_transition)).scalar_one()
        engine.dispose()
    out: dict[str, Any] = {
        "bench": "flows", "backend": args.backend, "database": url.split(":", 1)[0],
        "durable": args.durable,
        "tasks": n, "workers": args.workers, "chained_ms_per_call": round(chain_s * 1000 / n, 3),
        "chained_cpu_ms_per_call": round(chain_cpu.cpu_s * 1000 / n, 3),
        "fanned_cpu_ms_per_call": round(fan_cpu.cpu_s * 1000 / n, 3),
        "fanned_task_runs_per_s": round(n / fan_s, 1), "task_instances": tis,
        "history_rows": rows,
        "cpu_s": round(chain_cpu.cpu_s + fan_cpu.cpu_s, 3),
        "cpu_ms_per_call": round((chain_cpu.cpu_s + fan_cpu.cpu_s) * 1000 / (2 * n), 3),
        "cpu_s_by_role": {"chained": chain_cpu.by_role, "fanned": fan_cpu.by_role},
        **host_speed(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
