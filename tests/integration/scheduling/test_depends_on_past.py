"""depends_on_past (Airflow's PrevDagrunDep): a task instance waits for the same task in the
previous run; it never makes its run fail as a deadlock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.sdk import DAG
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync

JAN1 = datetime(2026, 1, 1, tzinfo=UTC)


def dag_with_past(dag_id: str = "past") -> DAG:
    with DAG(dag_id, schedule="@daily", start_date=JAN1, catchup=True) as dag:
        NoopOperator(task_id="a", depends_on_past=True) >> NoopOperator(task_id="after_a")
        NoopOperator(task_id="b")
    return dag


def states(h: Any, dag_id: str = "past") -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    runs = {r.id: r.logical_date.day for r in h.runs(dag_id)}
    for t in h.tis(dag_id):
        out.setdefault(runs[t.dag_run_id], {})[t.task_id] = t.state
    return out


def test_a_failed_past_blocks_without_deadlock_until_it_succeeds(harness: Callable,
                                                                 engine: Engine) -> None:
    h = harness(datetime(2026, 1, 3, 12, tzinfo=UTC))
    h.sync(dag_with_past())
    h.executor.outcomes = {"a": "failed"}
    h.loop()
    s = states(h)
    assert s[1] == {"a": "failed", "after_a": "upstream_failed", "b": "success"}  # first run: ran
    assert s[2] == {"a": "none", "after_a": "none", "b": "success"}  # waits for run 1's a
    assert s[3] == {"a": "none", "after_a": "none", "b": "success"}
    runs = {r.logical_date.day: r.state for r in h.runs("past")}
    assert runs == {1: "failed", 2: "running", 3: "running"}  # no deadlock failure
    h.clock.advance(3600)
    h.loop()
    assert {r.logical_date.day: r.state for r in h.runs("past")}[2] == "running"

    h.executor.outcomes = {}
    first_a = next(t for t in h.tis("past") if t.task_id == "a" and t.state == "failed")
    with transaction(engine) as conn:
        door.set_task_instance_state(conn, first_a.id, frm=TI.FAILED, to=TI.SUCCESS,
                                     actor=Actor.USER, now=h.clock())
    h.loop()
    runs = {r.logical_date.day: r.state for r in h.runs("past")}
    assert runs[2] == runs[3] == "success"
    assert states(h)[3]["a"] == "success"


def test_skipped_counts_as_done_and_the_first_run_passes(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 2, 12, tzinfo=UTC))
    h.sync(dag_with_past("past2"))
    h.loop()
    assert {r.state for r in h.runs("past2")} == {"success"}


def test_wait_for_downstream_waits_for_the_direct_downstream(harness: Callable,
                                                            engine: Engine) -> None:
    h = harness(datetime(2026, 1, 2, 12, tzinfo=UTC))
    serialized = dag_with_past("wfd").serialize()
    for task in serialized["tasks"]:
        if task["task_id"] == "a":
            task["wait_for_downstream"] = True
    path = "/virtual/dags/wfd.py"
    with transaction(engine) as conn:
        FileSync(conn, now=h.clock(), folder_prefix="/virtual/dags/", present_files={path},
                 paused_at_creation=False).file(path, ImportOutcome(path, dags=[serialized]),
                                                mtime=0.0, size=0, content_hash="x")
    h.executor.outcomes = {"after_a": "failed"}
    h.loop()
    s = states(h, "wfd")
    assert s[1]["a"] == "success" and s[1]["after_a"] == "failed"
    assert s[2]["a"] == "none"  # a succeeded in run 1, but its downstream did not
    assert {r.logical_date.day: r.state for r in h.runs("wfd")} == {1: "failed", 2: "running"}
