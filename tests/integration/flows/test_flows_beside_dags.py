"""A flow's file in the DAGs folder: the DAG processor neither deactivates the flow nor
reports its file; the scheduler leaves a running flow run alone."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine
from tests.integration.flows.conftest import runs, task_rows

from statewright.core.clock import ManualClock
from statewright.db.repositories import dags as dag_repo
from statewright.flows.backend import FlowRunStart, TaskRunStart
from statewright.services.dag_processor import DagProcessor
from statewright.services.flows.recorder import DbBackend
from statewright.services.scheduler.scheduler import Scheduler
from statewright.services.scheduler.steps import scheduling_steps


class _NoSlots:
    identity = "none"

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: object) -> None:
        raise AssertionError("nothing is queued")


FLOW_FILE = textwrap.dedent('''
    from statewright.flows import flow

    @flow
    def etl():
        return 1
''')


def test_the_dag_processor_leaves_a_flow_in_its_folder_active(engine: Engine, tmp_path: Path,
                                                              recorded: DbBackend) -> None:
    folder = tmp_path / "dags"
    folder.mkdir()
    path = folder / "etl_flow.py"
    path.write_text(FLOW_FILE)
    recorded.start_flow_run(FlowRunStart("etl", None, {}, fileloc=str(path)))
    proc = DagProcessor(engine, folder, clock=ManualClock(datetime(2026, 1, 1, tzinfo=UTC)),
                        timeout=10.0)
    proc.run_once()
    path.unlink()
    stats = proc.run_once()
    assert stats.deactivated == []
    with engine.connect() as conn:
        assert dag_repo.get_dag(conn, "etl").is_active


def test_the_scheduler_leaves_a_running_flow_run_alone(engine: Engine,
                                                       recorded: DbBackend) -> None:
    handle = recorded.start_flow_run(FlowRunStart("busy", None, {}))
    recorded.start_task_run(TaskRunStart(handle.run_pk, "waits-0", "waits-k", 0, run=False))
    Scheduler(engine, _NoSlots(), extra_steps=scheduling_steps()).run_once()
    (run,) = runs(engine)
    assert run.state == "running"
    assert task_rows(engine)["waits-0"].state == "none"
