"""Footprint benchmark (not a test). Prints one JSON line.

Starts ``statewright standalone --examples`` on a fresh temporary home (SQLite, a free port),
waits until the example DAGs' first runs have ended and the web UI answers, then measures the
PSS (proportional set size: shared pages counted once across the tree) of the whole process tree:

- idle: after the examples' first runs ended, the tree quiet for a few seconds;
- load: the peak while ``--runs`` runs of each example DAG are triggered at once, sampled every
  0.25 s until they all end;
- after: idle again once the load ended.

Each figure lists the processes by role (from their command line) with their PSS, so a reader sees
where the memory goes.

Usage: python bench/footprint.py [--runs 5] [--idle-seconds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
from _cpu import CpuMeter, host_speed

MIB = 1024 * 1024


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _role(proc: psutil.Process, root_pid: int) -> str:
    if proc.pid == root_pid:
        return "standalone"
    try:
        cmd = " ".join(proc.cmdline())
    except psutil.Error:
        return "gone"
    for marker, role in (("forkserver", "forkserver"), ("resource_tracker", "resource_tracker"),
                         ("spawn_main", "spawned"), ("multiprocessing", "multiprocessing")):
        if marker in cmd:
            return role
    return proc.name() or "other"


def tree_pss(root: psutil.Process) -> dict[str, Any]:
    procs = [root, *root.children(recursive=True)]
    total = 0
    by_process: list[dict[str, Any]] = []
    for p in procs:
        try:
            memory = p.memory_full_info()
        except psutil.Error:
            continue
        total += memory.pss
        by_process.append({"pid": p.pid, "ppid": p.ppid(), "role": _role(p, root.pid),
                           "pss_mib": round(memory.pss / MIB, 1),
                           "uss_mib": round(memory.uss / MIB, 1)})
    return {"pss_mib": round(total / MIB, 1), "processes": len(by_process),
            "by_process": by_process}


def _env(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    env.update(STATEWRIGHT_HOME=str(home), STATEWRIGHT_API_PORT=str(port),
               STATEWRIGHT_DAGS_FOLDER=str(home / "dags"), PYTHONUNBUFFERED="1")
    return env


def _runs_unfinished(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT count(*) FROM dag_run WHERE state IN "
                           "('queued', 'running')").fetchone()
    return int(row[0])


def _wait(what: str, check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"footprint bench: timed out waiting for {what}")
        time.sleep(0.25)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status < 500)
    except OSError:
        return False


def _trigger(home: Path, port: int, runs: int) -> int:
    """Trigger ``runs`` runs of each example DAG from this process (no server round trip)."""
    os.environ.update(_env(home, port))
    from statewright.core.clock import utcnow
    from statewright.core.transitions import Actor
    from statewright.db.engine import make_engine, transaction
    from statewright.db.repositories import dags as dag_repo
    from statewright.services.dag_runs import trigger_dag

    engine = make_engine(f"sqlite:///{home / 'statewright.db'}")
    try:
        with engine.connect() as conn:
            ids = [d.dag_id for d in dag_repo.list_dags(conn)]
        with transaction(engine) as conn:
            for _ in range(runs):
                for dag_id in ids:
                    trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER)
    finally:
        engine.dispose()
    return len(ids) * runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="runs of each example DAG under load")
    parser.add_argument("--idle-seconds", type=float, default=15.0,
                        help="quiet time before each idle sample (task processes idle for 10 s"
                             " are let go)")
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    host_speed()
    home = Path(tempfile.mkdtemp(prefix="sw-bench-footprint-"))
    (home / "dags").mkdir()
    port = _free_port()
    exe = Path(sys.executable).with_name("statewright")
    proc = subprocess.Popen([str(exe), "standalone", "--examples"], env=_env(home, port),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict[str, Any] = {"bench": "footprint"}
    try:
        root = psutil.Process(proc.pid)
        db = home / "statewright.db"
        started = time.perf_counter()
        _wait("the web UI", lambda: _answers(f"http://127.0.0.1:{port}/api/v1/health"),
              args.timeout)
        _wait("the examples' first runs", lambda: _runs_unfinished(db) == 0 and
              bool(_example_runs(db)), args.timeout)
        out["ready_seconds"] = round(time.perf_counter() - started, 2)
        with CpuMeter() as idle_cpu:
            time.sleep(args.idle_seconds)
        idle = tree_pss(root)
        with CpuMeter() as load_cpu:
            triggered = _trigger(home, port, args.runs)
            t0 = time.perf_counter()
            peak: dict[str, Any] = {"pss_mib": 0.0}
            while _runs_unfinished(db):
                sample = tree_pss(root)
                if sample["pss_mib"] > peak["pss_mib"]:
                    peak = sample
                if time.perf_counter() - t0 > args.timeout:
                    raise SystemExit("footprint bench: the load did not end in time")
                time.sleep(0.25)
            load_seconds = time.perf_counter() - t0
        # The whole deployment's CPU (every process of it): idle, per second; under the load,
        # per run triggered (each example DAG's run, its task instances included).
        out["idle_cpu_ms_per_s"] = round(idle_cpu.cpu_s * 1000 / idle_cpu.wall_s, 2)
        out["idle_cpu_s_by_role"] = idle_cpu.by_role
        out.update(load_cpu.figures(triggered, "run"))
        time.sleep(args.idle_seconds)
        after = tree_pss(root)
        out.update(idle_pss_mib=idle["pss_mib"], idle_processes=idle["processes"],
                   load_runs=triggered, load_seconds=round(load_seconds, 2),
                   load_peak_pss_mib=peak["pss_mib"],
                   load_peak_processes=peak.get("processes"),
                   after_load_pss_mib=after["pss_mib"], after_load_processes=after["processes"],
                   idle_by_process=idle["by_process"], load_peak_by_process=peak.get("by_process"))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(out))


def _example_runs(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT count(*) FROM dag_run").fetchone()[0])
    except sqlite3.Error:
        return 0


if __name__ == "__main__":
    main()
