"""A user's timetable in a DAG file, through the DAG processor and the scheduler (which never
imports the file): its runs come from the runs computed at parse time; one that raises gives its
DAG an import error while the other DAGs keep scheduling."""

from __future__ import annotations

import os
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.clock import ManualClock
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.db.repositories import runs as run_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.scheduler.dagrun_creation import DagRunCreation

TIMETABLE = '''
from datetime import UTC, datetime, timedelta
from statewright.sdk import DAG, EmptyOperator
from statewright.sdk.timetables import DagRunInfo, DataInterval, Timetable

class Workdays(Timetable):
    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        if last_automated_data_interval is not None:
            start = last_automated_data_interval.start + timedelta(days=1)
        else:
            start = restriction.earliest
        while start.weekday() >= 5:
            start += timedelta(days=1)
        return DagRunInfo.interval(start=start, end=start + timedelta(days=1))

class Broken(Timetable):
    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        raise RuntimeError("calendar service down")
'''


def write(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_custom_timetable_runs_and_a_raising_one_is_an_import_error(
        engine: Engine, tmp_path: Path) -> None:
    # The file computes its runs at the real time of parsing: work around today.
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=10)
    folder = tmp_path / "dags"
    folder.mkdir()
    body = TIMETABLE + textwrap.dedent(f'''
        START = datetime.fromisoformat({start.isoformat()!r})
        with DAG("workdays", schedule=Workdays(), start_date=START, catchup=True):
            EmptyOperator(task_id="a")
        ''')
    write(folder, "workdays.py", body)
    write(folder, "broken.py", TIMETABLE + textwrap.dedent(f'''
        with DAG("broken", schedule=Broken(), start_date=datetime.fromisoformat(
                {start.isoformat()!r})):
            EmptyOperator(task_id="a")
        '''))
    write(folder, "hourly.py", textwrap.dedent(f'''
        from datetime import datetime
        from statewright.sdk import DAG, EmptyOperator
        with DAG("hourly", schedule="@hourly", catchup=False,
                 start_date=datetime.fromisoformat({start.isoformat()!r})):
            EmptyOperator(task_id="a")
        '''))
    clock = ManualClock(today + timedelta(hours=12))
    DagProcessor(engine, folder, clock=clock, timeout=20.0).run_once()
    with engine.connect() as conn:
        rows = {d.dag_id: d for d in dag_repo.list_dags(conn, only_active=False)}
        errors = {Path(e.filename).name: e.stacktrace for e in import_errors.list_all(conn)}
    assert set(rows) == {"workdays", "hourly"}
    assert "Broken.next_dagrun_info raised RuntimeError: calendar service down" in \
        errors["broken.py"]
    assert rows["workdays"].next_dagrun == start + timedelta(
        days=(7 - start.weekday()) % 7 if start.weekday() >= 5 else 0)
    step = DagRunCreation()
    for _ in range(15):
        step.create_due_runs(engine, clock())
    with engine.connect() as conn:
        runs = run_repo.list_runs(conn, "workdays", limit=100)
        hourly = run_repo.list_runs(conn, "hourly", limit=100)
    expected = [start + timedelta(days=d) for d in range(11)
                if (start + timedelta(days=d)).weekday() < 5
                and start + timedelta(days=d + 1) <= clock()]
    assert sorted(r.logical_date for r in runs) == expected
    assert all(r.data_interval_end - r.data_interval_start == timedelta(days=1) for r in runs)
    assert len(hourly) == 1  # the other DAGs keep scheduling


def test_a_manual_run_gets_the_data_interval_its_timetable_infers(engine: Engine) -> None:
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.sdk import DAG
    from statewright.services.dag_runs import create_run
    from statewright.services.dag_view import DagView
    from statewright.services.scheduler.dag_schedule import schedule_spec

    with DAG("daily_intervals", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             schedule="@daily") as dag:
        NoopOperator(task_id="a")
    ser = dag.serialize()
    # Data interval timetables infer the last complete interval; trigger ones the instant.
    ser["schedule"] = {"timetable": {"type": "cron_data_interval", "expression": "@daily",
                                     "timezone": "UTC"}}
    assert schedule_spec(ser).timetable.type_name == "cron_data_interval"
    at = datetime(2026, 1, 25, 1, tzinfo=UTC)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, ser, now=at)
        pk = create_run(conn, DagView(ser, "h"), now=at, actor=Actor.USER, run_id="m1")
        run = run_repo.get(conn, pk)
    assert (run.data_interval_start, run.data_interval_end) == (
        datetime(2026, 1, 24, tzinfo=UTC), datetime(2026, 1, 25, tzinfo=UTC))
    assert run.logical_date == at
