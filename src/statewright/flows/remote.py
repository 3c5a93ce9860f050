"""The flow process's side of the recorder: a process of its own that holds the database
session and stores every state change before the call returns.

Requests and answers cross two pipes as pickled tuples. The recorder learns that the flow's
process died (SIGKILL) when its pipe closes without a ``close``: it then ends the run Crashed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any

from statewright.flows.backend import RequestBackend

RECORDER_MODULE = "statewright.services.flows.recorder"


class RecorderError(RuntimeError):
    """The recorder refused or failed a request (its message says why)."""


class RecorderClient(RequestBackend):
    """A ``Backend`` whose every call is answered by the recorder process."""

    def __init__(self, proc: subprocess.Popen[bytes], out: Connection, inp: Connection) -> None:
        self._proc = proc
        self._out = out
        self._in = inp
        self._lock = threading.Lock()  # one round trip at a time
        self._queue_lock = threading.Lock()
        self._queue: list[tuple[str, Any, Future[Any]]] = []
        self._closed = False

    @classmethod
    def start(cls) -> RecorderClient:
        to_rec_r, to_rec_w = os.pipe()
        from_rec_r, from_rec_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-m", RECORDER_MODULE, str(to_rec_r), str(from_rec_w),
             str(os.getpid())],
            pass_fds=(to_rec_r, from_rec_w), stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C at a terminal reaches the flow, not its recorder
        )
        os.close(to_rec_r)
        os.close(from_rec_w)
        client = cls(proc, Connection(to_rec_w, readable=False),
                     Connection(from_rec_r, writable=False))
        try:
            ok, value = client._in.recv()
        except EOFError:
            raise RecorderError(
                f"The flow recorder process exited at start (exit code {proc.wait()}); its "
                "error is above.") from None
        if not ok:
            proc.wait()
            raise RecorderError(str(value))
        return client

    def request(self, method: str, arg: Any) -> Any:
        """Send the request and wait for its answer. Requests that threads make while a round
        trip is under way go together in the next one (the recorder stores them in one
        transaction); each caller still returns only once its change is stored."""
        mine: Future[Any] = Future()
        with self._queue_lock:
            self._queue.append((method, arg, mine))
        with self._lock:
            if not mine.done():
                with self._queue_lock:
                    batch, self._queue = self._queue, []
                self._round_trip(batch)
        return mine.result()

    def _round_trip(self, batch: list[tuple[str, Any, Future[Any]]]) -> None:
        try:
            if self._closed:
                raise RecorderError("The flow recorder is closed.")
            self._out.send(("batch", [(m, a) for m, a, _f in batch]))
            answers = self._in.recv()
        except (EOFError, OSError, RecorderError) as exc:
            err = exc if isinstance(exc, RecorderError) else RecorderError(
                "The flow recorder process is gone; states of this flow run can no longer be "
                "recorded.")
            for _m, _a, fut in batch:
                fut.set_exception(err)
            return
        for (_m, _a, fut), (ok, value) in zip(batch, answers, strict=True):
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(RecorderError(str(value)))

    def close(self, *, finished: bool) -> None:
        if self._closed:
            return
        try:
            with self._lock:
                self._out.send(("close", finished))
                self._in.recv()
        except (EOFError, OSError):
            pass
        finally:
            self._closed = True
            self._out.close()
            self._in.close()
            self._proc.wait()
