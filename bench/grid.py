"""Grid API benchmark (not a test). Prints one JSON line.

Builds, directly in a fresh SQLite database, a DAG of ``--tasks`` tasks (a fan-out) with
``--runs`` finished runs (every task instance success, as the door writes them), then times
``GET /api/v1/dags/{dag_id}/grid?limit=<runs>`` through FastAPI's TestClient, signed in with an
API token: ``--repeat`` calls after one warm-up call; min and median in milliseconds, the
response's bytes, and the number of SQL statements one call runs. ``--format compact`` adds
``&format=compact`` (the call of the UI's grid view); the default format is the one API users
get without it.

Usage: python bench/grid.py [--tasks 1000] [--runs 25] [--repeat 10] [--format default|compact]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import tempfile
import time
from datetime import timedelta
from typing import Any

from _cpu import CpuMeter, host_speed


def build(engine: Any, dag_id: str, n_tasks: int, n_runs: int) -> None:
    from sqlalchemy import select

    from statewright.core.clock import utcnow
    from statewright.core.states import TI
    from statewright.core.transitions import Actor
    from statewright.db import transition as door
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo
    from statewright.db.tables import task_instance
    from statewright.services.dag_runs import create_run
    from statewright.services.dag_view import DagView

    serialized = {"dag_id": dag_id, "fileloc": None,
                  "tasks": [{"task_id": f"t{i}", "upstream": [], "downstream": []}
                            for i in range(n_tasks)]}
    start = utcnow() - timedelta(days=n_runs)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=start)
    view = DagView(serialized, dag_repo.dag_hash(serialized))
    c = task_instance.c
    for i in range(n_runs):
        now = start + timedelta(days=i)
        with transaction(engine) as conn:
            run_pk = create_run(conn, view, now=now, actor=Actor.USER, logical_date=now)
            door.set_dag_run_state(conn, run_pk, frm="queued", to="running",
                                   actor=Actor.SCHEDULER, now=now)
            ids = list(conn.execute(select(c.id).where(c.dag_run_id == run_pk)).scalars())
            for frm, to, actor in ((TI.NONE, TI.SCHEDULED, Actor.SCHEDULER),
                                   (TI.SCHEDULED, TI.QUEUED, Actor.SCHEDULER),
                                   (TI.QUEUED, TI.RUNNING, Actor.EXECUTOR),
                                   (TI.RUNNING, TI.SUCCESS, Actor.WORKER)):
                door.set_task_instance_state(conn, ids, frm=frm, to=to, actor=actor, now=now,
                                             increment_try=to == TI.RUNNING)
            door.set_dag_run_state(conn, run_pk, frm="running", to="success",
                                   actor=Actor.SCHEDULER, now=now)


def _token(engine: Any) -> str:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import users as user_repo
    from statewright.services.auth.accounts import create_token
    from statewright.services.auth.passwords import hash_password

    with transaction(engine) as conn:
        user_repo.insert_user(conn, "bench", hash_password("bench-password"), "admin", utcnow())
    secret, _ = create_token(engine, "bench", kind="api", name="bench", now=utcnow(),
                             lifetime=None)
    return str(secret)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--format", choices=("default", "compact"), default="default")
    args = parser.parse_args()
    host_speed()
    from fastapi.testclient import TestClient
    from sqlalchemy import event

    from statewright.api import create_app
    from statewright.config import load_settings
    from statewright.db.engine import make_engine
    from statewright.db.migrate import migrate

    logging.disable(logging.WARNING)
    tmp = tempfile.mkdtemp(prefix="sw-bench-grid-")
    engine = make_engine(f"sqlite:///{tmp}/bench.db")
    try:
        migrate(engine)
        t0 = time.perf_counter()
        build(engine, "grid", args.tasks, args.runs)
        build_seconds = time.perf_counter() - t0
        headers = {"Authorization": f"Bearer {_token(engine)}"}
        settings = load_settings({"STATEWRIGHT_HOME": tmp})
        statements = [0]

        def count(*_: Any) -> None:
            statements[0] += 1

        url = f"/api/v1/dags/grid/grid?limit={args.runs}"
        if args.format != "default":
            url += f"&format={args.format}"
        with TestClient(create_app(engine=engine, settings=settings), headers=headers) as client:
            warm = client.get(url)
            assert warm.status_code == 200, warm.text
            body = warm.json()
            assert len(body["rows"]) == args.tasks and len(body["dag_runs"]) == args.runs
            times = []
            with CpuMeter() as cpu:
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    client.get(url).raise_for_status()
                    times.append((time.perf_counter() - started) * 1000)
            event.listen(engine, "before_cursor_execute", count)
            client.get(url).raise_for_status()
            event.remove(engine, "before_cursor_execute", count)
        print(json.dumps({
            "bench": "grid", "format": args.format, "tasks": args.tasks, "runs": args.runs,
            "cells": args.tasks * args.runs, "build_seconds": round(build_seconds, 2),
            "response_bytes": len(warm.content), "statements_per_call": statements[0],
            "grid_ms_min": round(min(times), 1),
            "grid_ms_median": round(statistics.median(times), 1),
            **cpu.figures(args.repeat, "call")}))
    finally:
        engine.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
