"""Queued flow runs that no serving process starts: the scheduler starts the flow's process.

A run of a flow triggered from the UI, the API (``POST /api/v1/dags/{flow}/dagRuns``) or
``statewright dags trigger`` waits in ``queued``. This scheduler step starts
``python -m statewright.flows.entry FILE:FUNCTION`` for it, which adopts the queued run (the
door's ``queued → running`` decides, so a serving process and the scheduler never both run
it) and records it through its recorder, heartbeats and ``Crashed`` on a kill included.

The file and function come from the flow's deployment (``flow.serve``) or, for a flow that
was only run, from what its last run recorded. A served flow's runs are left to its serving
process for ``served_grace`` first. A run that cannot start (no known file, the file is gone,
the process exits before adopting the run) fails with the reason as its state message.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Any

from sqlalchemy import Engine

from statewright.core.states import RUN, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import flows as flow_repo
from statewright.flows.serving import ADOPT_ENV, PARAMETERS_ENV

log = logging.getLogger("statewright.flows.launcher")
ENTRY_MODULE = "statewright.flows.entry"
Launch = Callable[[list[str], dict[str, str], IO[bytes]], "subprocess.Popen[bytes]"]


def _popen(cmd: list[str], env: dict[str, str], output: IO[bytes]) -> subprocess.Popen[bytes]:
    # a session of its own: stopping the scheduler does not stop the flow runs it started
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=output,
                            stderr=subprocess.STDOUT, start_new_session=True)


@dataclass
class _Started:
    run_pk: int
    proc: subprocess.Popen[bytes]
    output: IO[bytes]


@dataclass(frozen=True)
class Target:
    entrypoint: str
    parameters: dict[str, Any]
    served: bool


class QueuedFlowRuns:
    """A scheduler step: ``Scheduler(extra_steps=[QueuedFlowRuns()])``."""

    def __init__(self, served_grace: timedelta = timedelta(seconds=30),
                 launch: Launch | None = None) -> None:
        self.served_grace = served_grace
        self.launch = launch or _popen
        self.started: dict[int, _Started] = {}

    def __call__(self, scheduler: Any, now: datetime) -> int:
        return self.step(scheduler.engine, now)

    @property
    def due_moves_with_now(self) -> bool:
        """``due_probe``: its query is built once (a bool while it watches a process)."""
        return not self.started

    def due(self, now: datetime) -> Any:
        """A process of its own to watch, or a flow run queued (read in the scheduler pass's
        probe)."""
        return True if self.started else flow_repo.runs_to_launch_query()

    def step(self, engine: Engine, now: datetime) -> int:
        changed = self._reap(engine, now)
        with read_snapshot(engine) as conn:
            queued = [r for r in flow_repo.runs_to_launch(conn) if r.id not in self.started]
            targets = {r.dag_id: target_of(conn, r.serialized) for r in queued}
        for run in queued:
            target = targets[run.dag_id]
            if target is None:
                changed += fail_run(engine, run.id, now, (
                    f"Flow {run.dag_id!r} has no known file to start its run from: run the "
                    "flow once from its file (a module-level function), or serve it "
                    "(flow.serve)."))
                continue
            queued_at = run.queued_at or now
            if target.served and now - queued_at < self.served_grace:
                continue  # its serving process starts it
            self._start(engine, run, target, now)
            changed += 1
        return changed

    def _start(self, engine: Engine, run: Any, target: Target, now: datetime) -> None:
        env = {**os.environ, ADOPT_ENV: str(run.id), "STATEWRIGHT_FLOWS_BACKEND": "recorder",
               "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
               PARAMETERS_ENV: json.dumps({**target.parameters, **dict(run.conf or {})})}
        output = tempfile.TemporaryFile()
        try:
            proc = self.launch([sys.executable, "-m", ENTRY_MODULE, target.entrypoint], env,
                               output)
        except OSError as exc:
            output.close()
            fail_run(engine, run.id, now, f"The flow's process could not start: {exc}")
            return
        log.info("flow run %s of %s: started its process (pid %s)", run.run_id, run.dag_id,
                 proc.pid)
        self.started[run.id] = _Started(run.id, proc, output)

    def _reap(self, engine: Engine, now: datetime) -> int:
        """Forget finished processes; a run one left queued (it never adopted it) fails."""
        changed = 0
        for pk, started in list(self.started.items()):
            code = started.proc.poll()
            if code is None:
                continue
            del self.started[pk]
            started.output.seek(0)
            tail = started.output.read()[-1500:].decode(errors="replace").strip()
            started.output.close()
            changed += fail_run(engine, pk, now, (
                f"The flow's process exited (code {code}) before it started the run"
                + (f": {tail}" if tail else ".")), only_if_queued=True)
        return changed

    def close(self) -> None:
        for started in self.started.values():
            started.output.close()
        self.started.clear()


def target_of(conn: Any, serialized: Any) -> Target | None:
    dag_id = (serialized or {}).get("dag_id")
    deployment = flow_repo.deployment_of(conn, dag_id) if dag_id else None
    if deployment is not None:
        return Target(deployment.entrypoint, dict(deployment.parameters or {}), True)
    entrypoint = (serialized or {}).get("entrypoint")
    return Target(entrypoint, {}, False) if entrypoint else None


def fail_run(engine: Engine, run_pk: int, now: datetime, message: str, *,
             only_if_queued: bool = False) -> int:
    with transaction(engine) as conn:
        res = door.set_dag_run_state(conn, run_pk, frm=RUN.QUEUED, to=RUN.FAILED,
                                     actor=Actor.SCHEDULER, now=now, name=StateName.FAILED,
                                     message=message)
    if res.changed:
        log.warning("flow run %s failed to start: %s", run_pk, message)
    elif not only_if_queued:
        log.info("flow run %s: no longer queued (%s)", run_pk, res.lost.get(run_pk))
    return len(res.changed)
