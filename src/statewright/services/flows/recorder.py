"""The recorder: stores a flow run's state changes through the one door, as they happen.

``DbBackend`` answers the flow engine's requests (``statewright.flows.backend.Backend``) over
an engine. Run as ``python -m statewright.services.flows.recorder IN OUT PID`` it serves the
flow process on two pipes, heartbeats its runs, and — when the pipe closes without a
``close`` (the flow's process was killed) — ends the unfinished runs and their running task
runs ``Crashed``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from sqlalchemy import Connection as DbConnection
from sqlalchemy import Engine

from statewright.core.states import RUN, TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction, transaction_on
from statewright.db.repositories import flows as flow_repo
from statewright.db.repositories import task_cache
from statewright.flows.backend import (
    CacheEntry,
    Change,
    Deployment,
    FlowRunHandle,
    FlowRunStart,
    Note,
    Pause,
    PauseKey,
    QueuedRun,
    RequestBackend,
    Step,
    TaskRunStart,
)
from statewright.services.worker.log_paths import log_path_for

ACTOR = Actor.WORKER
_READS = frozenset({"flow_run_state", "cache_get", "queued_runs", "pause_input"})
_REQUESTS = frozenset({"start_flow_run", "start_task_run", "task_state", "flow_state",
                       "flow_run_state", "cache_get", "cache_put", "register_deployment",
                       "queued_runs", "note", "pause", "pause_input", "record_step",
                       "extra"})
log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


def _name(name: str) -> StateName:
    try:
        return StateName(name)
    except ValueError:
        raise ValueError(f"{name!r} is not a state name this version records.") from None


class DbBackend(RequestBackend):
    """The flow engine's backend over the database (one transaction per request)."""

    def __init__(self, engine: Engine, *, recorder_pid: int | None = None,
                 logs_folder: Path | None = None, keep_connection: bool = False) -> None:
        self.engine = engine
        # Write on one connection kept open: only where one thread writes (the recorder's).
        self.keep_connection = keep_connection
        self._conn: DbConnection | None = None
        self.logs_folder = logs_folder
        self.recorder_pid = recorder_pid
        self.open_runs: set[int] = set()
        self._runs: dict[int, tuple[str, str]] = {}
        self._replaying: set[int] = set()  # resumed durable runs: task runs may exist
        self._lock = threading.Lock()

    # -- the Backend protocol: one transaction per request (reads on a snapshot) ---------------

    def request(self, method: str, arg: Any) -> Any:
        if method in _READS:
            with read_snapshot(self.engine) as conn:
                return getattr(self, f"_{method}")(conn, arg, _now())
        return self.apply(method, arg)

    def apply(self, method: str, arg: Any) -> Any:
        if method not in _REQUESTS:
            raise ValueError(f"{method!r} is not a request of the flow recorder.")
        with self._transaction() as conn:
            return getattr(self, f"_{method}")(conn, arg, _now())

    def _transaction(self) -> Any:
        if not self.keep_connection:
            return transaction(self.engine)
        if self._conn is None or self._conn.invalidated or self._conn.closed:
            self._conn = self.engine.connect()
        return transaction_on(self._conn)

    def _extra(self, conn: Any, arg: tuple[str, Any], now: datetime) -> Any:
        """Blocks, variables, artifacts, events, pools, flow-run reads (``extras``)."""
        from statewright.services.flows import extras

        return extras.handle(conn, arg, now)

    def release(self) -> None:
        """Close the kept connection (the engine stays the caller's)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def apply_batch(self, batch: list[tuple[str, Any]]) -> list[tuple[bool, Any]]:
        """Requests of several threads in one transaction (one commit for all); when one
        fails, each is applied alone so that only that one fails."""
        if len(batch) > 1:
            try:
                with self._transaction() as conn:
                    now = _now()
                    for method, _arg in batch:
                        if method not in _REQUESTS:
                            raise ValueError(method)
                    return [(True, getattr(self, f"_{m}")(conn, a, now)) for m, a in batch]
            except Exception:
                log.debug("a batch of %d requests failed; applying them one by one", len(batch))
        out: list[tuple[bool, Any]] = []
        for method, arg in batch:
            try:
                out.append((True, self.apply(method, arg)))
            except Exception as exc:
                log.exception("recorder request %s failed", method)
                out.append((False, f"{type(exc).__name__}: {exc}"))
        return out

    def _run_keys(self, conn: Any, run_pk: int) -> tuple[str, str]:
        keys = self._runs.get(run_pk)
        if keys is None:
            run = door_run(conn, run_pk)
            keys = self._runs[run_pk] = (str(run.dag_id), str(run.run_id))
        return keys

    # -- requests (each inside the caller's transaction) -------------------------------------

    def _start_flow_run(self, conn: Any, req: FlowRunStart, now: datetime) -> FlowRunHandle:
        flow_repo.ensure_flow(conn, req.flow_name, fileloc=req.fileloc,
                              description=req.description, now=now,
                              entrypoint=req.entrypoint, params_spec=req.params_spec)
        taken: frozenset[str] = frozenset()
        replay, tries = False, {}
        if req.adopt_run is not None:
            pk = req.adopt_run
            res = door.set_dag_run_state(conn, pk, frm=RUN.QUEUED, to=RUN.RUNNING,
                                         actor=ACTOR, now=now)
            if not res.changed:
                raise ValueError(f"Flow run {pk} cannot be started: it is "
                                 f"{res.lost.get(pk) or 'already running'}, not queued.")
            run_id = str(door_run(conn, pk).run_id)
            before = flow_repo.get_flow_run(conn, pk)
            replay = bool(before is not None and before.durable)
            if replay:  # a crashed durable run resumed: the calls that run again, their tries
                tries = flow_repo.tries_to_run_again(conn, pk)
                self._replaying.add(pk)
            else:  # it ran before (suspended): new task runs take new names
                taken = flow_repo.task_ids_of_run(conn, pk)
        else:
            stamp = now.strftime("%Y-%m-%dT%H:%M:%S")
            run_id = f"{req.run_name or 'flow'}__{stamp}_{uuid.uuid4().hex[:6]}"
            pk = door.create_dag_run(conn, dag_id=req.flow_name, run_id=run_id,
                                     run_type="flow", actor=ACTOR, now=now,
                                     conf=req.parameters, name=StateName.PENDING)
            door.set_dag_run_state(conn, pk, frm=RUN.QUEUED, to=RUN.RUNNING, actor=ACTOR,
                                   now=now)
        parent_run = None
        if req.parent_task_run is not None:
            parent_run = _parent_run_of(conn, req.parent_task_run)
        flow_repo.insert_flow_run(conn, {
            "dag_run_id": pk, "parent_dag_run_id": parent_run,
            "parent_task_instance_id": req.parent_task_run, "parameters": req.parameters,
            "hostname": req.hostname, "pid": req.pid, "recorder_pid": self.recorder_pid,
            "last_heartbeat_at": now, "durable": req.durable or replay,
            "retries": req.retries})
        with self._lock:
            self.open_runs.add(pk)
            self._runs[pk] = (req.flow_name, run_id)
        template = log_path_for(self.logs_folder, req.flow_name, run_id, "{task_id}",
                                "{try_number}")  # type: ignore[arg-type]
        return FlowRunHandle(pk, run_id, req.flow_name, template, taken, replay=replay,
                             tries=tries)

    def _start_task_run(self, conn: Any, req: TaskRunStart, now: datetime) -> int:
        dag_id, run_id = self._run_keys(conn, req.run_pk)
        row = {"max_tries": req.max_tries, "operator": "@task", "hostname": req.hostname,
               "pid": req.pid}
        again = (flow_repo.task_run_to_run_again(conn, req.run_pk, req.task_run_name)
                 if req.run_pk in self._replaying else None)
        if again is not None and req.run:  # a resumed durable run: the crashed call, a new try
            door.set_task_instance_state(conn, again.id, frm=TI(again.state), to=TI.RUNNING,
                                         actor=ACTOR, now=now, name=StateName.RUNNING,
                                         increment_try=True,
                                         values={"hostname": req.hostname, "pid": req.pid})
            return int(again.id)
        if req.run:
            return door.create_running_task_instance(
                conn, dag_run_id=req.run_pk, dag_id=dag_id, run_id=run_id,
                task_id=req.task_run_name, values=row, actor=ACTOR, now=now)
        (pk,) = door.create_task_instances(
            conn, dag_run_id=req.run_pk, dag_id=dag_id, run_id=run_id,
            rows=[{"task_id": req.task_run_name, **row}], actor=ACTOR, now=now)
        return pk

    def _task_state(self, conn: Any, change: Change, now: datetime) -> None:
        if change.frm == change.to and change.to != TI.RUNNING.value:
            door.rename_task_instances(conn, [change.pk], state=TI(change.to),
                                       name=_name(change.name), actor=ACTOR, now=now,
                                       message=change.message)
            return
        values = {"next_retry_at": change.next_retry_at} if change.next_retry_at else None
        res = door.set_task_instance_state(
            conn, change.pk, frm=TI(change.frm), to=TI(change.to), actor=ACTOR, now=now,
            name=_name(change.name), message=change.message,
            try_number=change.try_number if change.try_number else None,
            increment_try=change.increment_try, values=values)
        if res.lost:
            log.warning("task run %s: %s → %s not applied, it is %s", change.pk, change.frm,
                        change.to, res.lost[change.pk])

    def _flow_state(self, conn: Any, change: Change, now: datetime) -> None:
        if change.frm == change.to:
            door.rename_dag_runs(conn, [change.pk], state=RUN(change.to),
                                 name=_name(change.name), actor=ACTOR, now=now,
                                 message=change.message)
            return
        res = door.set_dag_run_state(conn, change.pk, frm=RUN(change.frm), to=RUN(change.to),
                                     actor=ACTOR, now=now, name=_name(change.name),
                                     message=change.message)
        if res.lost:
            log.warning("flow run %s: %s → %s not applied, it is %s", change.pk, change.frm,
                        change.to, res.lost[change.pk])

    def _flow_run_state(self, conn: Any, run_pk: int, now: datetime) -> tuple[str, str]:
        return flow_repo.run_state(conn, run_pk)

    def _cache_get(self, conn: Any, entry: CacheEntry, now: datetime) -> tuple[bool, Any]:
        row = task_cache.lookup(conn, entry.flow_name, entry.task_key, entry.key, now)
        return (True, row.value) if row is not None else (False, None)

    def _note(self, conn: Any, note: Note, now: datetime) -> None:
        write = door.note_task_instances if note.kind == "task" else door.note_dag_runs
        write(conn, [(note.pk, note.message)], actor=ACTOR, now=now)

    def _record_step(self, conn: Any, step: Step, now: datetime) -> None:
        """A durable run's completed call: its success and its result, in one transaction."""
        self._task_state(conn, step.change, now)
        self._cache_put(conn, step.entry, now)

    def _cache_put(self, conn: Any, entry: CacheEntry, now: datetime) -> None:
        task_cache.store(conn, [{
            "dag_id": entry.flow_name, "task_id": entry.task_key, "cache_key": entry.key,
            "value": entry.value, "created_at": now, "expires_at": entry.expires_at,
            "run_id": entry.run_id, "try_number": entry.try_number}])

    def _pause(self, conn: Any, pause: Pause, now: datetime) -> None:
        flow_repo.want_input(conn, pause.run_pk, pause.key, pause.schema)
        self._flow_state(conn, Change(pause.run_pk, "running", "paused", pause.name,
                                      pause.message), now)

    def _pause_input(self, conn: Any, key: PauseKey, now: datetime) -> tuple[bool, Any]:
        row = flow_repo.get_flow_run(conn, key.run_pk)
        inputs = (row.pause_inputs or {}) if row is not None else {}
        return key.key in inputs, inputs.get(key.key)

    def _register_deployment(self, conn: Any, d: Deployment, now: datetime) -> None:
        # Only ``flow.serve`` asks for it: the scheduler's modules stay out of the start.
        from statewright.services.flows.deployments import register_deployment

        register_deployment(conn, d, now)

    def _queued_runs(self, conn: Any, flow_name: str, now: datetime) -> list[QueuedRun]:
        return [QueuedRun(r.id, r.run_id, dict(r.conf or {}))
                for r in flow_repo.queued_flow_runs(conn) if r.dag_id == flow_name]

    def heartbeat(self) -> None:
        with self._lock:
            runs = set(self.open_runs)
        if runs:
            with transaction(self.engine) as conn:
                flow_repo.heartbeat(conn, runs, _now())

    def close(self, *, finished: bool) -> None:
        if not finished:
            self.crash_unfinished("the flow's process ended without finishing its run "
                                  "(killed?)")

    def _start_resumed(self, resumed_runs: list[Any]) -> None:
        """Durable runs queued to resume: a process of their own, in a session of its own,
        runs each again (its output in the run's log folder), whether a scheduler runs or not
        (the first to take the run from ``queued`` runs it)."""
        from statewright.services.flows.resume import run_resumed

        for resumed in resumed_runs:
            template = log_path_for(self.logs_folder, resumed.dag_id, resumed.run_id,
                                    "{task_id}", 1)
            try:
                if template is None:
                    run_resumed(self.engine, resumed, wait=False, output=subprocess.DEVNULL)
                else:
                    folder = Path(template.split("task_id={task_id}")[0])
                    folder.mkdir(parents=True, exist_ok=True)
                    with open(folder / "resumed.out", "ab") as output:
                        run_resumed(self.engine, resumed, wait=False, output=output)
                log.warning("flow run %s crashed and resumes by itself", resumed.run_id)
            except Exception as exc:  # the run stays queued, shown as Resuming
                log.error("flow run %s could not resume: %s", resumed.run_id, exc)

    def crash_unfinished(self, message: str) -> int:
        """End this recorder's unfinished runs, and their running task runs, Crashed; the
        durable ones with retries left resume."""
        with self._lock:
            runs = set(self.open_runs)
        if not runs:
            return 0
        outcome = crash_runs(self.engine, runs, message)
        self._start_resumed(outcome.resumed)
        return len(outcome)


def crash_runs(engine: Engine, runs: set[int], message: str, *, actor: Actor = ACTOR
               ) -> CrashOutcome:
    """The processes of ``runs`` died: their running task runs and the runs end Crashed, but
    a durable run whose flow's retries are not used up is queued to resume (its running call
    ``up_for_retry``, named Crashed; the run ``queued``, named Resuming)."""
    now = _now()
    outcome = CrashOutcome()
    with transaction(engine) as conn:
        resuming = flow_repo.durable_runs_with_retries_left(conn, runs)
        for ti in flow_repo.running_task_instances(conn, runs):
            to = TI.UP_FOR_RETRY if ti.dag_run_id in resuming else TI.FAILED
            door.set_task_instance_state(conn, ti.id, frm=TI.RUNNING, to=to, actor=actor,
                                         now=now, name=StateName.CRASHED, message=message,
                                         try_number=ti.try_number)
        for row in flow_repo.runs_in_states(conn, runs, (RUN.RUNNING.value, RUN.QUEUED.value)):
            if row.id in resuming and row.state == RUN.RUNNING.value:
                outcome.resumed.append(_requeue(conn, row.id, resuming[row.id], message,
                                                actor, now))
                continue
            outcome.crashed += len(door.set_dag_run_state(
                conn, row.id, frm=RUN(row.state), to=RUN.FAILED, actor=actor, now=now,
                name=StateName.CRASHED, message=message).changed)
    return outcome


@dataclass
class CrashOutcome:
    crashed: int = 0
    resumed: list[Any] = field(default_factory=list)
    """``services.flows.resume.Resumed`` of the durable runs queued to resume."""

    def __len__(self) -> int:
        return self.crashed + len(self.resumed)


def _requeue(conn: Any, run_pk: int, resumes: int, message: str, actor: Actor,
             now: datetime) -> Any:
    from statewright.services.flows.resume import resumed_run

    door.set_dag_run_state(conn, run_pk, frm=RUN.RUNNING, to=RUN.QUEUED, actor=actor, now=now,
                           name=StateName.RESUMING,
                           message=f"Crashed: {message}; it resumes (resume {resumes + 1})")
    flow_repo.count_resume(conn, run_pk)
    return resumed_run(conn, run_pk)


def door_run(conn: Any, run_pk: int) -> Any:
    from statewright.db.repositories import runs

    return runs.get(conn, run_pk)


def _parent_run_of(conn: Any, ti_pk: int) -> int | None:
    from statewright.db.repositories import task_instances

    row = task_instances.get(conn, ti_pk)
    return int(row.dag_run_id) if row is not None else None


# -- the recorder process ------------------------------------------------------------------------


def serve(backend: DbBackend, inp: Connection, out: Connection, stop: threading.Event) -> bool:
    """Answer requests until ``close`` (True) or the pipe closes (False: the flow died). A flow
    killed while its request was being stored cannot read the answer: the pipe is broken, and
    that too means it died (its runs end Crashed), not an error of the recorder's own."""
    while True:
        try:
            method, arg = inp.recv()
        except (EOFError, OSError):
            return False
        if method == "close":
            backend.close(finished=bool(arg))
            with contextlib.suppress(OSError):  # its runs are closed: nothing is left to say
                out.send((True, None))
            return True
        answer = (backend.apply_batch(arg) if method == "batch"
                  else backend.apply_batch([(method, arg)])[0])
        try:
            out.send(answer)
        except OSError:
            return False


def main(argv: list[str]) -> int:
    from statewright.config import load_settings
    from statewright.db.engine import make_engine
    from statewright.db.schema_version import migrate_embedded

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # it ends when the flow's process does
    inp = Connection(int(argv[0]), writable=False)
    out = Connection(int(argv[1]), readable=False)
    try:
        settings = load_settings()
        engine = make_engine(settings.database_url)
        migrate_embedded(engine)  # a new home's SQLite file needs no set-up step
        with read_snapshot(engine) as conn:
            flow_repo.list_flows(conn)
    except Exception as exc:
        out.send((False, f"The flow recorder cannot use the database: {exc}. Run "
                         "`statewright db migrate` (or set STATEWRIGHT_DATABASE_URL), or set "
                         "STATEWRIGHT_FLOWS_BACKEND=memory to run without recording."))
        return 1
    backend = DbBackend(engine, recorder_pid=os.getpid(), logs_folder=settings.logs_folder,
                        keep_connection=True)
    stop = threading.Event()
    interval = float(os.environ.get("STATEWRIGHT_FLOWS_HEARTBEAT_SECONDS", "5"))

    def beat() -> None:
        while not stop.wait(interval):
            try:
                backend.heartbeat()
            except Exception:
                log.exception("flow run heartbeat failed")

    beating = threading.Thread(target=beat, name="flow-heartbeat", daemon=True)
    beating.start()
    out.send((True, None))
    finished = serve(backend, inp, out, stop)
    stop.set()
    backend.release()
    if not finished:
        backend.crash_unfinished("the flow's process died (killed, or lost) before it "
                                 "finished its run")
    beating.join(timeout=30)
    engine.dispose()
    return 0


def _exit(code: int) -> None:
    """Leave without the interpreter's teardown of every imported module (a few hundred
    milliseconds that the flow's process would wait for): everything is committed and closed."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main(sys.argv[1:]))
