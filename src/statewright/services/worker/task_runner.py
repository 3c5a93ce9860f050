"""Runs one try of one task in the current process. Holds no database session.

Used inside the local executor's task processes (``child_main``) and by the in-process executor
of ``dag.test()``. It loads the DAG file (cached by path and mtime), builds the context, runs the
task through the SDK runtime and reports a ``TryResult``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from statewright.sdk import masking, runtime, secrets
from statewright.sdk.assets import asset_context
from statewright.sdk.loader import load_dag_file
from statewright.services.secrets.masks import EXTRA_MASKS
from statewright.services.secrets.relay import RelayStore
from statewright.services.worker import callbacks
from statewright.services.worker.outcome import FAILED, INTERRUPTED, TryResult
from statewright.services.worker.task_state import relayed_state
from statewright.services.worker.workload import Workload

HOSTNAME = socket.gethostname()

_dag_files: dict[str, tuple[float, Any]] = {}
_imported = [0.0]
"""Seconds this process spent importing DAG files (``child_main`` reports each try's share)."""


def _load_dag(fileloc: str, dag_id: str) -> Any:
    mtime = os.stat(fileloc).st_mtime
    cached = _dag_files.get(fileloc)
    if cached is None or cached[0] != mtime:
        started = time.perf_counter()
        result = load_dag_file(fileloc)
        _imported[0] += time.perf_counter() - started
        if result.error:
            raise RuntimeError(f"DAG file {fileloc} failed to import:\n{result.error}")
        _dag_files[fileloc] = (mtime, result)
        cached = _dag_files[fileloc]
    dags = cached[1].dags
    if dag_id not in dags:
        raise RuntimeError(f"DAG {dag_id!r} is no longer defined in {fileloc}")
    return dags[dag_id]


_LOG_FORMAT = logging.Formatter("[%(asctime)s] %(levelname)s %(name)s: %(message)s")


class _Tee(io.TextIOBase):
    def __init__(self, *streams: Any) -> None:
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def _make_folder(path: str) -> None:
    """The try's log folder: one ``mkdir`` where its parent is there (a new task instance of a
    run already logging), the whole path otherwise."""
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)


@contextlib.contextmanager
def task_log(path: str | None, echo: bool = False) -> Iterator[None]:
    """Send the task's logging, stdout and stderr to its per-try log file."""
    if not path:
        yield
        return
    _make_folder(os.path.dirname(path))
    with open(path, "a", encoding="utf-8") as raw:
        fh = masking.RedactingStream(raw)  # secrets are masked before they reach the file
        handler = logging.StreamHandler(fh)
        handler.setFormatter(_LOG_FORMAT)
        root = logging.getLogger()
        root.addHandler(handler)
        old_level = root.level
        if old_level != logging.INFO:  # setLevel empties every logger's cache: only if needed
            root.setLevel(logging.INFO)
        out: Any = masking.RedactingStream(_Tee(raw, sys.__stdout__)) if echo else fh
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                yield
        finally:
            out.flush()
            fh.flush()
            root.removeHandler(handler)
            if root.level != old_level:
                root.setLevel(old_level)


def run_workload(
    w: Workload,
    *,
    dag: Any = None,
    echo: bool = False,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ask: Callable[[Any], Any] | None = None,
) -> TryResult:
    """Run one try. ``dag`` skips loading the file (dag.test). ``ask`` sends a question to the
    supervising worker and returns its answer (cache lookups, is the try still running)."""
    started = now()
    base = dict(hostname=HOSTNAME, pid=os.getpid(), start_date=started)
    masking.reset_masks()  # what this try registers is stored with its outcome
    with task_log(w.log_path, echo=echo), relayed_secrets(ask), relayed_state(ask):
        log = logging.getLogger("statewright.task")
        log.info("starting %s.%s run %s try %s", w.dag_id, w.task_id, w.run_id, w.try_number)
        try:
            if dag is None:
                if not w.fileloc:
                    raise RuntimeError(f"DAG {w.dag_id!r} has no file to load it from")
                dag = _load_dag(w.fileloc, w.dag_id)
            task = dag.task_dict[w.task_id]
        except Exception as exc:
            log.exception("could not load the task")
            return TryResult.of(w, **base, kind=FAILED, error=f"{type(exc).__name__}: {exc}",
                             traceback=traceback.format_exc())
        context = runtime.build_context(
            dag, task, run_id=w.run_id, logical_date=w.logical_date,
            data_interval_start=w.data_interval_start, data_interval_end=w.data_interval_end,
            conf=w.conf, try_number=w.try_number, max_tries=w.max_tries,
            xcoms=runtime.upstream_xcoms(w.xcoms, w.mapped_upstreams),
            pushed_xcoms=getattr(w, "pushed", None), prev=getattr(w, "prev_success", None),
            map_index=w.map_index,
            extra=asset_context(**getattr(w, "assets", None) or {}),
        )
        context["dag_run"].run_type = w.run_type  # LatestOnlyOperator reads it
        # A sensor continuing its try after a reschedule (see sdk.sensors.base).
        context["ti"].first_poke_at = getattr(w, "first_poke_at", None)
        context["ti"].poke_count = getattr(w, "poke_count", 0)
        outcome = callbacks.run_try(task, context, w, _execute, ask)
        log.info("finished: %s%s", outcome.kind, f" ({outcome.error})" if outcome.error else "")
    extra = dict(getattr(outcome, "extra", None) or {})
    if masking.registered_count():
        extra[EXTRA_MASKS] = masking.registered_values()
    return TryResult.of(w, **base, kind=outcome.kind, return_value=outcome.return_value,
                     skip_task_ids=list(outcome.skip_task_ids), error=outcome.error,
                     traceback=outcome.traceback, extra=extra)


@contextlib.contextmanager
def relayed_secrets(ask: Callable[[Any], Any] | None) -> Iterator[None]:
    """Connections and variables the task reads come from its worker (``ask``)."""
    if ask is None:
        yield
        return
    previous = secrets.installed_store()
    secrets.install_store(RelayStore(ask))
    try:
        yield
    finally:
        secrets.install_store(previous)


def _execute(task: Any, context: Any, w: Workload) -> Any:
    resume = getattr(runtime, "resume_task", None)
    if w.next_method and resume is not None:
        return resume(task, context, w.next_method, w.next_kwargs)
    return runtime.execute_task(task, context)


def _die_with_parent() -> None:
    """On Linux, ask the kernel to signal this task process when its parent (the fork server)
    dies. SIGTERM, not SIGKILL: a SIGTERM to the whole process group (a graceful stop) also ends
    the fork server, and the try must still get its chance to stop and report Interrupted.
    A supervisor killed outright is covered by the lifeline, which kills the process."""
    import signal

    from statewright.services.worker.process_name import signal_on_parent_death

    signal_on_parent_death(signal.SIGTERM)


def _asker(conn: Any) -> Callable[[Any], Any]:
    """Questions to the supervisor go up the workload's pipe; it answers before anything else."""

    def ask(request: Any) -> Any:
        conn.send(request)
        return conn.recv()

    return ask


class TaskInterrupted(BaseException):
    """SIGTERM reached the task process: its worker is stopping and asks the try to end. A
    BaseException, so that a task's ``except Exception`` does not swallow it."""


def _on_sigterm(signum: int, frame: Any) -> None:
    import signal

    # Once: a second SIGTERM (the fork server's death signal follows a process group's
    # SIGTERM) must not break the report on its way up the pipe.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise TaskInterrupted("the worker is shutting down (SIGTERM): the try was interrupted")


def _report(conn: Any, w: Workload, result: TryResult) -> None:
    """Send the outcome up; one that cannot be pickled (a value nested past Python's recursion
    limit) is reported as the try's failure, so the try ends ``failed`` with the reason instead
    of the process dying (``Crashed``). A broken pipe: the supervisor is gone."""
    try:
        conn.send(result)
    except OSError:
        return
    except Exception as exc:
        detail = (str(exc).splitlines() or [""])[0][:300]
        failed = TryResult.of(w, kind=FAILED, hostname=HOSTNAME, pid=os.getpid(),
                              start_date=result.start_date,
                              error=f"the try's outcome could not be sent to its worker: "
                                    f"{type(exc).__name__}: {detail}")
        failed.import_seconds = result.import_seconds
        conn.send(failed)


def child_main(conn: Any) -> None:
    """The loop of a local executor task process: receive a workload, run it, report. SIGTERM
    ends the running try (reported ``interrupted``; ``finally`` blocks run) and the process."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    _die_with_parent()
    # Every try logs at INFO to its file (task_log); a task process has no other handler, so
    # the root logger stays at INFO between tries rather than being set and reset for each.
    logging.getLogger().setLevel(logging.INFO)
    while True:
        try:
            w = conn.recv()
        except (EOFError, OSError, TaskInterrupted):
            return
        if w is None:
            return
        interrupted = False
        imported = _imported[0]
        try:
            result = run_workload(w, ask=_asker(conn))
        except BaseException as exc:  # report anything, then carry on or exit
            interrupted = isinstance(exc, TaskInterrupted)
            result = TryResult.of(w, kind=INTERRUPTED if interrupted else FAILED,
                                  error=f"{type(exc).__name__}: {exc}",
                                  traceback=traceback.format_exc(), hostname=HOSTNAME,
                                  pid=os.getpid())
        result.import_seconds = _imported[0] - imported
        _report(conn, w, result)
        if interrupted:
            return
