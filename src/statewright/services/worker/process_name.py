"""A process's short name (``comm``: what ``top``, ``ps -o comm`` and ``/proc/<pid>/stat`` show),
and the other ``prctl`` a worker's process sets: the signal it gets when its parent dies.

A local executor's supervisor and its task processes are forked from the multiprocessing fork
server and keep its command line; their name tells them apart (``sw-supervisor``,
``sw-task``), for a person reading ``top`` and for the benchmarks' CPU split.

Only the standard library is imported here: this module is preloaded into the fork server.
"""

from __future__ import annotations

import sys

SUPERVISOR = "sw-supervisor"
TASK = "sw-task"
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15


def prctl(option: int, value: object) -> None:
    """Linux's ``prctl(option, value)``; elsewhere (or when libc cannot be loaded), nothing."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def set_process_name(name: str) -> None:
    """Name this process (Linux keeps the first 15 bytes)."""
    import ctypes

    prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]))


def signal_on_parent_death(signum: int) -> None:
    """Ask the kernel to send ``signum`` to this process when its parent dies."""
    prctl(_PR_SET_PDEATHSIG, signum)
