"""The multiprocessing fork server of task processes: what it preloads, and who shares it.

Task processes, the local executor's supervisor and DAG-callback processes are forked by
multiprocessing's fork server (the processes that start them have threads and are never forked
themselves). Two things keep that cheap in memory:

- **Preloaded, then frozen.** The fork server imports :data:`PRELOAD` once; the last module of the
  list (``statewright.services.worker.preloaded``) collects and freezes what the imports built
  (``gc.freeze()``), so no collection in a forked child walks those objects and copies their pages:
  they stay shared with the fork server.
- **One fork server per tree.** A process forked by the fork server inherits its address and the
  "alive" pipe, but multiprocessing only reuses a fork server it started itself: the local
  executor's supervisor would start a second one (a new interpreter importing everything again,
  ~22 to 36 MiB). :func:`share_inherited_fork_server` makes such a process ask the fork server that
  forked it; if that one is gone (killed on its own), the process starts one of its own as before.
- **No main module again.** multiprocessing runs the parent's main script again in every child it
  starts (as ``__mp_main__``): for ``statewright standalone`` that is the CLI, FastAPI and the UI,
  ~16 MiB of private memory in each task process and in the supervisor. Our processes' targets
  are functions of importable modules, so :func:`start` starts them without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from multiprocessing import forkserver, resource_tracker
from typing import Any

PRELOAD = ["statewright.services.worker.task_runner", "statewright.services.worker.lifeline",
           "statewright.services.executors.local_supervisor",
           "statewright.services.worker.preloaded"]
"""What the fork server imports once; ``preloaded`` (it freezes the rest) comes last."""

_shared = threading.Lock()
_starting = threading.Lock()


def start(process: Any) -> None:
    """Start a multiprocessing process whose target lives in an importable module, without the
    child running this process's main script again."""
    main = sys.modules.get("__main__")
    with _starting:
        path = getattr(main, "__file__", None)
        if path is None or getattr(main, "__spec__", None) is not None:
            process.start()
            return
        try:
            del main.__file__  # type: ignore[union-attr]
            process.start()
        finally:
            main.__file__ = path  # type: ignore[union-attr]


def share_inherited_fork_server() -> bool:
    """In a process forked by the fork server, fork new processes from that same server.
    Returns whether there is one to share (False in a process started otherwise)."""
    server: Any = forkserver._forkserver  # type: ignore[attr-defined]
    if server._forkserver_address is None or server._forkserver_alive_fd is None:
        return False
    if server._forkserver_pid is not None:
        return False  # this process started its own
    with _shared:
        if getattr(server, "_statewright_shared", False):
            return True
        own_start = server.ensure_running
        connect = server.connect_to_new_process

        def ensure_running() -> None:
            if server._forkserver_address is not None and server._forkserver_pid is None:
                resource_tracker.ensure_running()  # the inherited one: nothing to start
                return
            own_start()

        def connect_to_new_process(fds: Any) -> Any:
            try:
                return connect(fds)
            except (ConnectionRefusedError, FileNotFoundError):
                # The inherited fork server is gone: start one of this process's own.
                with contextlib.suppress(OSError):
                    os.close(server._forkserver_alive_fd)
                server._forkserver_address = None
                server._forkserver_alive_fd = None
                return connect(fds)

        server.ensure_running = ensure_running
        server.connect_to_new_process = connect_to_new_process
        forkserver.ensure_running = ensure_running
        forkserver.connect_to_new_process = connect_to_new_process
        server._statewright_shared = True
    return True
