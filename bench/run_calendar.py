"""Calendar API benchmark (not a test). Prints one JSON line.

Builds, in a fresh SQLite database, a DAG scheduled hourly with ``--runs`` queued runs one hour
apart (a year of hourly runs by default) and its next run set at the last one, then times
``GET /api/v1/dags/cal/calendar`` for the year of the runs (the Calendar tab's call) and for the
next year (1,000 planned runs from the schedule) through FastAPI's TestClient, signed in with an
API token: ``--repeat`` calls after a warm-up; min and median in milliseconds.

Usage: python bench/run_calendar.py [--runs 8760] [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from _cpu import host_speed
from grid import _token

YEAR = 2025


def build(engine: Any, n_runs: int) -> None:
    from statewright.core.clock import utcnow
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo
    from statewright.services.dag_runs import RunSpec, create_runs
    from statewright.services.dag_view import DagView
    from statewright.services.scheduler.dag_schedule import next_fields, schedule_spec

    serialized = {"dag_id": "cal", "fileloc": None, "schedule": "@hourly",
                  "start_date": f"{YEAR}-01-01T00:00:00+00:00",
                  "tasks": [{"task_id": "t", "upstream": [], "downstream": []}]}
    first = datetime(YEAR, 1, 1, tzinfo=UTC)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
        view = DagView(serialized, dag_repo.dag_hash(serialized))
        specs = [RunSpec(view=view, run_id=f"r{i}", run_type="scheduled",
                         logical_date=first + timedelta(hours=i)) for i in range(n_runs)]
        create_runs(conn, specs, now=utcnow(), actor=Actor.SCHEDULER)
        info = schedule_spec(serialized).next_info(None, first + timedelta(hours=n_runs))
        dag_repo.set_next_dagrun(conn, "cal", next_fields(info))


def _time(client: Any, url: str, repeat: int) -> tuple[list[float], Any]:
    warm = client.get(url)
    assert warm.status_code == 200, warm.text
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - t0) * 1000)
    return times, warm.json()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=8760)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    host_speed()
    from fastapi.testclient import TestClient

    from statewright.api import create_app
    from statewright.config import load_settings
    from statewright.db.engine import make_engine
    from statewright.db.migrate import migrate

    logging.disable(logging.WARNING)
    tmp = tempfile.mkdtemp(prefix="sw-bench-calendar-")
    engine = make_engine(f"sqlite:///{tmp}/bench.db")
    try:
        migrate(engine)
        build(engine, args.runs)
        headers = {"Authorization": f"Bearer {_token(engine)}"}
        settings = load_settings({"STATEWRIGHT_HOME": tmp})
        year = (f"/api/v1/dags/cal/calendar?logical_date_gte={YEAR}-01-01T00:00:00Z"
                f"&logical_date_lt={YEAR + 1}-01-01T00:00:00Z")
        planned = (f"/api/v1/dags/cal/calendar?logical_date_gte={YEAR + 1}-01-01T00:00:00Z"
                   f"&logical_date_lt={YEAR + 2}-01-01T00:00:00Z")
        with TestClient(create_app(engine=engine, settings=settings), headers=headers) as client:
            runs_ms, body = _time(client, year, args.repeat)
            plan_ms, plan = _time(client, planned, args.repeat)
        print(json.dumps({
            "bench": "calendar", "runs": args.runs, "days": body["total_entries"],
            "runs_counted": sum(e["count"] for e in body["dag_runs"] if e["state"] != "planned"),
            "year_of_runs_ms_min": round(min(runs_ms), 1),
            "year_of_runs_ms_median": round(statistics.median(runs_ms), 1),
            "planned_counted": sum(e["count"] for e in plan["dag_runs"]),
            "planned_year_ms_min": round(min(plan_ms), 1),
            "planned_year_ms_median": round(statistics.median(plan_ms), 1)}))
    finally:
        engine.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
