"""``dag.test()`` benchmark (not a test). Prints one JSON line.

- per task: the marginal cost of a task instance in a fan-out of no-op tasks,
  (time of 2,000 tasks - time of 200 tasks) / 1,800;
- per chain link: the marginal cost of a link in a chain of no-op tasks,
  (time of a 200-link chain - time of a 50-link chain) / 150.

Wall time and the process's CPU time are both given (on a machine shared with other work the
CPU time is the steadier figure). Each size runs ``--repeat`` times (fresh process each, on a
temporary SQLite database, as ``dag.test()`` does); the figures use the minimum and the median
of the runs.

Usage: python bench/dag_test.py [--repeat 3] [--fan 200,2000] [--chain 50,200]
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import statistics
import subprocess
import sys
import time
from typing import Any

from _cpu import CpuMeter


def one(shape: str, n: int) -> tuple[float, float]:
    from statewright.sdk import DAG, task

    @task
    def noop() -> None:  # a try that runs (an EmptyOperator's never does)
        return None

    logging.disable(logging.WARNING)
    with DAG(f"bench_{shape}_{n}", max_active_tasks=n) as dag:
        tasks = [noop.override(task_id=f"t{i}")() for i in range(n)]
        if shape == "chain":
            for a, b in itertools.pairwise(tasks):
                a >> b
    started, cpu = time.perf_counter(), time.process_time()
    result = dag.test()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert result.state == "success", result.state
    return seconds, cpu


def _timed(shape: str, n: int, repeat: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(repeat):
        res = subprocess.run([sys.executable, __file__, "--one", shape, str(n)], check=True,
                             capture_output=True, text=True)
        w, c = json.loads(res.stdout.strip().splitlines()[-1])
        wall.append(w)
        cpu.append(c)
    return wall, cpu


def _marginal(small: list[float], big: list[float], extra: int) -> dict[str, float]:
    return {"min_ms": round((min(big) - min(small)) / extra * 1000, 3),
            "median_ms": round((statistics.median(big) - statistics.median(small))
                               / extra * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fan", default="200,2000")
    parser.add_argument("--chain", default="50,200")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    fan_small, fan_big = (int(x) for x in args.fan.split(","))
    chain_small, chain_big = (int(x) for x in args.chain.split(","))
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    with CpuMeter() as meter:  # every dag.test() process, start-up and import included
        for shape, n in (("fan", fan_small), ("fan", fan_big), ("chain", chain_small),
                         ("chain", chain_big)):
            times[f"{shape}_{n}"], cpus[f"{shape}_{n}"] = _timed(shape, n, args.repeat)
    fan, chain = (f"fan_{fan_small}", f"fan_{fan_big}"), (f"chain_{chain_small}",
                                                          f"chain_{chain_big}")
    out: dict[str, Any] = {
        "bench": "dag_test",
        "per_task": _marginal(times[fan[0]], times[fan[1]], fan_big - fan_small),
        "per_link": _marginal(times[chain[0]], times[chain[1]], chain_big - chain_small),
        # CPU time of the process: what a busy machine's wall clock hides
        "per_task_cpu": _marginal(cpus[fan[0]], cpus[fan[1]], fan_big - fan_small),
        "per_link_cpu": _marginal(cpus[chain[0]], cpus[chain[1]], chain_big - chain_small),
        "seconds": {k: [round(v, 3) for v in vs] for k, vs in times.items()},
        **meter.figures(args.repeat * (fan_small + fan_big + chain_small + chain_big), "task"),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
