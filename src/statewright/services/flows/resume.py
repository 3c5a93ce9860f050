"""Resuming a durable flow run (``@flow(durable=True)``) whose process died.

When its process dies and its flow's ``retries`` are not used up, the run resumes by itself:
its recorder (or the scheduler, when the recorder died too) moves the call that was running
``running → up_for_retry`` (``Crashed``) and the run ``running → queued`` (``Resuming``), and
a process runs the flow again on it. Otherwise the run ends ``failed`` (``Crashed``), and a
person resumes it (``statewright flows resume RUN_ID``, ``POST …/dagRuns/{run_id}/resume``):
its task calls that did not complete go ``failed → none`` and the run ``failed → queued``
(``Resuming``), with the person in the history. Either way the flow runs again from its start
and each completed call returns its recorded result (``statewright.flows.durable``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, select, update

from statewright.core.errors import StatewrightError
from statewright.core.states import RUN, TI, StateName
from statewright.core.transitions import Who
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.tables import dag, dag_run, task_instance
from statewright.db.tables_flows import flow_run
from statewright.flows.serving import ADOPT_ENV, PARAMETERS_ENV

log = logging.getLogger("statewright.flows.resume")


class ResumeRefused(StatewrightError):
    """The run cannot be resumed (the reason says why); nothing was changed."""


@dataclass(frozen=True)
class Resumed:
    run_pk: int
    dag_id: str
    run_id: str
    entrypoint: str | None
    parameters: dict[str, Any]


def resume_run(conn: Connection, run_id: str, *, actor: Who, now: datetime,
               dag_id: str | None = None) -> Resumed:
    """Record the resume of the crashed durable run ``run_id`` (in the caller's transaction)."""
    run = _the_run(conn, run_id, dag_id)
    row = conn.execute(select(flow_run).where(flow_run.c.dag_run_id == run.id)).first()
    if row is None:
        raise ResumeRefused(f"Run {run_id!r} of {run.dag_id!r} is not a flow run: a DAG run "
                            "is started again with `statewright tasks clear`.")
    if not row.durable:
        raise ResumeRefused(f"Flow run {run_id!r} of {run.dag_id!r} is not durable: its task "
                            "results were not recorded, so it cannot resume where it stopped. "
                            "Decorate the flow with @flow(durable=True) for its next runs.")
    if run.state != RUN.FAILED.value or run.state_name != StateName.CRASHED.value:
        raise ResumeRefused(f"Flow run {run_id!r} of {run.dag_id!r} is {run.state} "
                            f"({run.state_name}), not Crashed: only a crashed run is resumed.")
    crashed = list(conn.execute(select(task_instance.c.id).where(
        task_instance.c.dag_run_id == run.id, task_instance.c.state == TI.FAILED.value,
        task_instance.c.state_name == StateName.CRASHED.value)).scalars())
    if crashed:
        door.set_task_instance_state(conn, crashed, frm=TI.FAILED, to=TI.NONE, actor=actor,
                                     now=now, name=StateName.PENDING,
                                     message="the flow run is resumed: this call runs again")
    res = door.set_dag_run_state(conn, run.id, frm=RUN.FAILED, to=RUN.QUEUED, actor=actor,
                                 now=now, name=StateName.RESUMING,
                                 message=f"resumed after a crash (resume {row.resumes + 1})")
    if not res.changed:
        raise ResumeRefused(f"Flow run {run_id!r} changed meanwhile: it is "
                            f"{res.lost.get(run.id)}; try again.")
    conn.execute(update(flow_run).where(flow_run.c.dag_run_id == run.id)
                 .values(resumes=row.resumes + 1))
    return resumed_run(conn, run.id)


def resumed_run(conn: Connection, run_pk: int) -> Resumed:
    """What starting the resumed run ``run_pk`` needs: its flow's file and its parameters."""
    run = conn.execute(select(dag_run.c.dag_id, dag_run.c.run_id).where(
        dag_run.c.id == run_pk)).one()
    parameters = conn.execute(select(flow_run.c.parameters).where(
        flow_run.c.dag_run_id == run_pk)).scalar()
    return Resumed(run_pk, run.dag_id, run.run_id, _entrypoint(conn, run.dag_id),
                   dict(parameters or {}))


def _the_run(conn: Connection, run_id: str, dag_id: str | None) -> Any:
    stmt = select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id, dag_run.c.state,
                  dag_run.c.state_name).where(dag_run.c.run_id == run_id)
    if dag_id is not None:
        stmt = stmt.where(dag_run.c.dag_id == dag_id)
    rows = conn.execute(stmt).all()
    if not rows:
        raise ResumeRefused(f"There is no run {run_id!r}"
                            + (f" of {dag_id!r}." if dag_id else "."))
    if len(rows) > 1:
        raise ResumeRefused(f"Several DAGs have a run {run_id!r}: name the flow too.")
    return rows[0]


def _entrypoint(conn: Connection, dag_id: str) -> str | None:
    serialized = conn.execute(select(dag.c.serialized).where(dag.c.dag_id == dag_id)).scalar()
    value = (serialized or {}).get("entrypoint")
    return str(value) if value else None


def run_resumed(engine: Engine, resumed: Resumed, *, wait: bool = True,
                output: Any = None) -> int | subprocess.Popen[bytes]:
    """Start the flow's process on the resumed run: in the foreground (its exit code), or
    detached in a session of its own (``wait=False``: the process)."""
    if resumed.entrypoint is None:
        raise ResumeRefused(f"Flow {resumed.dag_id!r} has no known file to run it from: run "
                            "the flow once from its file (a module-level function).")
    env = {**os.environ, ADOPT_ENV: str(resumed.run_pk), "STATEWRIGHT_FLOWS_BACKEND": "recorder",
           "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
           PARAMETERS_ENV: json.dumps(resumed.parameters)}
    cmd = [sys.executable, "-m", "statewright.flows.entry", resumed.entrypoint]
    if wait:
        return subprocess.call(cmd, env=env)
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=output,
                            stderr=subprocess.STDOUT, start_new_session=True)


def resume_and_run(engine: Engine, run_id: str, *, actor: Who, now: datetime,
                   dag_id: str | None = None) -> int:
    """What ``statewright flows resume`` does: record the resume, then run it here."""
    with transaction(engine) as conn:
        resumed = resume_run(conn, run_id, actor=actor, now=now, dag_id=dag_id)
    code = run_resumed(engine, resumed, wait=True)
    assert isinstance(code, int)
    return code

