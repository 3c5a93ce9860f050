"""A task process dies with its supervisor.

Task processes are forked by the multiprocessing fork server, not by the supervisor, and each one
keeps the fork server alive; so the kernel's parent-death signal never reaches them when the
supervisor is killed (``kill -9`` of a worker or a scheduler). Instead the supervisor hands each
task process the read end of a pipe whose write end only the supervisor holds and never writes
to: when the supervisor dies, the pipe reads end-of-file and the task process kills itself. A try
therefore never runs on without a supervisor to heartbeat it and report it; the zombie reaper
ends it ``Crashed``, and its next try cannot overlap it.

Only the standard library is imported here: this module is preloaded into the fork server.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any


def task_process_main(conn: Any, lifeline: Any,
                      environment: dict[str, str] | None = None) -> None:
    """The entry point of a task process: take its supervisor's environment (the fork server
    that forked it has the one it started with), watch the lifeline, then run tries."""
    import gc

    if environment is not None:
        os.environ.clear()
        os.environ.update(environment)

    from statewright.services.worker.process_name import TASK, set_process_name
    from statewright.services.worker.task_runner import child_main

    set_process_name(TASK)

    # What the fork server preloaded stays shared with it: a collection that walks those
    # objects would write to their pages and copy each one into this process.
    gc.freeze()
    threading.Thread(target=watch_lifeline, args=(lifeline,), name="lifeline", daemon=True).start()
    child_main(conn)


def watch_lifeline(lifeline: Any) -> None:
    try:
        lifeline.recv_bytes()  # nothing is ever sent: this returns when the supervisor is gone
    except (EOFError, OSError):
        pass
    os.kill(os.getpid(), signal.SIGKILL)
