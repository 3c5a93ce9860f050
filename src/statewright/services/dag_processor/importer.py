"""Importing DAG files in child processes, several at a time, each with a timeout.

Each file is imported in a process of its own, so a file that hangs, calls ``sys.exit`` or
``os._exit``, crashes the interpreter or raises affects only itself. The child imports the file
with ``statewright.sdk.loader.load_dag_file`` and sends back the serialized DAGs as JSON; its
parent waits on all children at once and kills a child that passes the timeout.

The children are forked from an *import server*: one small single-threaded process (started
once, with the SDK imported) that receives batches of paths. Forking from it is fast and safe,
whatever threads the caller runs (the scheduler, the executor), and no child imports the
caller's main module again.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

__all__ = ["ImportOutcome", "ImportServer", "import_files"]


@dataclass
class ImportOutcome:
    """What importing one file gave: serialized DAGs, or the error that stopped the import.

    ``dag_errors`` holds DAGs the file defines that could not be serialized (the file's other
    DAGs are in ``dags``).
    """

    path: str
    dags: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    dag_errors: dict[str, str] = field(default_factory=dict)
    duration: float = 0.0
    transient: bool = False
    """The import did not happen (the import server was lost): try the file again later."""


def _silence_output() -> None:
    """DAG files that print must not write into the parent's terminal (or its JSON output)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass
    os.close(devnull)


def _payload(path: str) -> bytes:
    """Import ``path`` and describe the result as JSON (run in the child)."""
    try:
        from statewright.sdk.loader import load_dag_file

        result = load_dag_file(path)
        if result.error is not None:
            payload: dict[str, Any] = {"error": result.error}
        else:
            dags: list[dict[str, Any]] = []
            errors: dict[str, str] = {}
            for dag_id, dag in result.dags.items():
                try:
                    dags.append(dag.serialize())
                except BaseException as exc:  # a DAG that cannot be serialized
                    errors[dag_id] = f"{type(exc).__name__}: {exc}"
            payload = {"dags": dags, "dag_errors": errors}
        return json.dumps(payload, default=str).encode("utf-8")
    except BaseException:
        return json.dumps({"error": traceback.format_exc()}).encode("utf-8")


def _child(path: str, write_fd: int) -> None:
    """The forked child: import, write the JSON down the pipe, end without any cleanup."""
    try:
        gc.disable()  # a short life: a collection would touch (and copy) every inherited page
        os.setpgid(0, 0)  # its own process group: a timeout kills what it started too
        os.closerange(3, write_fd)  # nothing of the server's pipes stays open here
        os.closerange(write_fd + 1, _MAX_FD)
        _silence_output()
        data = memoryview(_payload(path))
        while data:
            data = data[os.write(write_fd, data):]
    finally:
        os._exit(0)  # no atexit handlers or threads the DAG file left behind


_MAX_FD = 65536


@dataclass
class _Job:
    path: str
    pid: int
    fd: int
    started: float
    deadline: float
    chunks: list[bytes] = field(default_factory=list)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def run_imports(paths: Iterable[str], *, timeout: float,
                parallelism: int) -> dict[str, ImportOutcome]:
    """Import every file of ``paths`` in a child forked from this process, ``parallelism`` at
    a time. Call it from a single-threaded process (the import server does)."""
    pending = deque(paths)
    running: dict[int, _Job] = {}
    out: dict[str, ImportOutcome] = {}
    selector = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and len(running) < max(1, parallelism):
                job = _fork(pending.popleft(), timeout)
                running[job.fd] = job
                selector.register(job.fd, selectors.EVENT_READ)
            now = time.monotonic()
            wait_for = max(0.0, min(j.deadline for j in running.values()) - now)
            for key, _ in selector.select(wait_for):
                job = running[key.fd]
                data = os.read(key.fd, 1 << 16)
                if data:
                    job.chunks.append(data)
                    continue
                selector.unregister(key.fd)
                del running[key.fd]
                out[job.path] = _collect(job, time.monotonic())
            now = time.monotonic()
            for fd, job in list(running.items()):
                if now >= job.deadline:
                    selector.unregister(fd)
                    del running[fd]
                    out[job.path] = _timed_out(job, now, timeout)
    finally:
        for job in running.values():  # an exception here: leave no child behind
            _kill(job)
        selector.close()
    return out


def _fork(path: str, timeout: float) -> _Job:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        _child(path, write_fd)
    os.close(write_fd)
    started = time.monotonic()
    return _Job(path, pid, read_fd, started, started + timeout)


def _collect(job: _Job, now: float) -> ImportOutcome:
    """The child closed its end of the pipe: read its exit status and its answer."""
    os.close(job.fd)
    _, status = os.waitpid(job.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    outcome = ImportOutcome(job.path, duration=now - job.started)
    try:
        payload = json.loads(b"".join(job.chunks).decode("utf-8")) if job.chunks else None
    except ValueError:
        payload = None
    if code != 0 or not isinstance(payload, dict):
        outcome.error = (
            f"The process importing {job.path} {_describe_exit(code)} before it reported any "
            "DAG. The file (or a module it imports) ended the interpreter: os._exit(), a crash "
            "in a C extension (segmentation fault) or the system killing it for memory. Run "
            f"`python {job.path}` to see what happens.")
        return outcome
    outcome.error = payload.get("error")
    outcome.dags = list(payload.get("dags") or [])
    outcome.dag_errors = dict(payload.get("dag_errors") or {})
    return outcome


def _timed_out(job: _Job, now: float, timeout: float) -> ImportOutcome:
    _kill(job)
    return ImportOutcome(
        job.path,
        duration=now - job.started,
        error=(
            f"Importing {job.path} took longer than {timeout:g} seconds and was stopped "
            "(STATEWRIGHT_DAG_FILE_PROCESSOR_TIMEOUT). Code that runs when the file is "
            "imported must not wait: move network calls, sleeps and loops into tasks."
        ),
    )


def _kill(job: _Job) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(job.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(job.pid, 0)
    except ChildProcessError:
        pass
    try:
        os.close(job.fd)
    except OSError:
        pass


# -- the import server ------------------------------------------------------------------------


def serve(read_fd: int, write_fd: int, database_url: str | None = None) -> None:
    """The import server's loop (run as ``python -c``): batches in, outcomes out.

    With ``database_url``, a DAG file's top-level ``Variable.get`` / ``BaseHook.get_connection``
    also reads the database (after the environment and the secrets backends, as a task does):
    each child opens its own connection the first time a file asks.
    """
    import statewright.sdk.loader  # noqa: F401  (imported once, inherited by every child)

    if database_url:
        from statewright.sdk import secrets
        from statewright.services.secrets.store import LazyDatabaseStore

        secrets.install_store(LazyDatabaseStore(database_url))

    conn_in = Connection(read_fd, writable=False)
    conn_out = Connection(write_fd, readable=False)
    gc.collect()
    gc.freeze()  # children share these objects' pages instead of copying them
    while True:
        try:
            request = conn_in.recv()
        except (EOFError, OSError):
            return  # the DAG processor is gone
        if request is None:
            return
        paths, timeout, parallelism = request
        conn_out.send(list(run_imports(paths, timeout=timeout,
                                       parallelism=parallelism).values()))


class ImportServer:
    """The process that forks one child per DAG file; started on first use, restarted if lost.

    A separate interpreter (``subprocess``), so that neither the caller's threads nor its main
    module are copied into the children.
    """

    def __init__(self, database_url: str | None = None) -> None:
        self.database_url = database_url
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._started_with: tuple[str | None, ...] = ()

    def _ensure(self) -> tuple[Connection, Connection]:
        if self._process is None or self._process.poll() is not None \
                or self._send is None or self._recv is None \
                or self._started_with != _switches():
            self._stop_process()
            self._started_with = _switches()
            to_server_r, to_server_w = os.pipe()
            from_server_r, from_server_w = os.pipe()
            root = str(Path(__file__).resolve().parents[3])
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                [root, *filter(None, [env.get("PYTHONPATH")])])
            code = ("from statewright.services.dag_processor.importer import serve; "
                    f"serve({to_server_r}, {from_server_w}, {self.database_url!r})")
            self._process = subprocess.Popen(
                [sys.executable, "-c", code], pass_fds=(to_server_r, from_server_w),
                stdin=subprocess.DEVNULL, env=env, close_fds=True)
            os.close(to_server_r)
            os.close(from_server_w)
            self._send = Connection(to_server_w, readable=False)
            self._recv = Connection(from_server_r, writable=False)
        return self._send, self._recv

    def import_files(self, paths: Sequence[str], *, timeout: float,
                     parallelism: int) -> dict[str, ImportOutcome]:
        if not paths:
            return {}
        with self._lock:
            send, recv = self._ensure()
            rounds = -(-len(paths) // max(1, parallelism))
            limit = timeout * rounds + 120.0
            try:
                send.send((list(paths), timeout, parallelism))
                if recv.poll(limit):
                    outcomes: list[ImportOutcome] = recv.recv()
                    return {o.path: o for o in outcomes}
            except (EOFError, OSError):
                pass
            self._stop_process()
        return {p: ImportOutcome(p, error=_LOST, transient=True) for p in paths}

    def _stop_process(self) -> None:
        for conn in (self._send, self._recv):
            if conn is not None:
                try:
                    conn.close()
                except OSError:
                    pass
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(5.0)
        self._process = None
        self._send = self._recv = None

    def close(self) -> None:
        with self._lock:
            if self._send is not None and self._process is not None \
                    and self._process.poll() is None:
                try:
                    self._send.send(None)
                    self._process.wait(2.0)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._stop_process()


_LOST = ("The DAG import server stopped while it imported this file; it is imported again on "
         "the next pass.")
def _switches() -> tuple[str | None, ...]:
    """The environment that changes how files import: a server started without it is replaced
    (the children inherit the server's environment, not the caller's)."""
    return tuple(os.environ.get(name) for name in _SWITCHES)


_SWITCHES = ("STATEWRIGHT_AIRFLOW_COMPAT", "STATEWRIGHT_FERNET_KEY")
_servers: dict[str | None, ImportServer] = {}
_servers_lock = threading.Lock()


@atexit.register
def _close_servers() -> None:
    for server in list(_servers.values()):
        server.close()


def import_files(paths: Sequence[str], *, timeout: float, parallelism: int,
                 database_url: str | None = None) -> dict[str, ImportOutcome]:
    """Import ``paths`` through this process's import server for ``database_url`` (see the
    module docstring; the URL is where DAG files' variables and connections are read)."""
    with _servers_lock:
        server = _servers.get(database_url)
        if server is None:
            server = _servers[database_url] = ImportServer(database_url)
    return server.import_files(paths, timeout=timeout, parallelism=parallelism)
