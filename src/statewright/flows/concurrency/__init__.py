"""Prefect's global concurrency limits (``prefect.concurrency``) on statewright's pools.

``with concurrency("db", occupy=1):`` takes ``occupy`` slots of the pool named ``db`` for the
block: a lease in the database, counted against the pool's slots by every process (two flow
processes using one pool wait for each other). A caller waits while the slots are taken
(``timeout_seconds``: then ``TimeoutError``). A lease ends with the block, or after
``lease_duration`` seconds (default 3600) when its process died holding it. A name with no pool
lets the block run at once, as Prefect does for a limit that does not exist, unless
``strict=True``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator

from statewright.flows import extras

__all__ = ["ConcurrencySlotAcquisitionError", "acquire", "release", "slots"]


class ConcurrencySlotAcquisitionError(Exception):
    """A limit that does not exist under ``strict=True``, or asks more slots than it has."""


def _limits(names: list[str], occupy: int, strict: bool) -> dict[str, int]:
    limits: dict[str, int] = {}
    for name in names:
        slots = extras.call("pool", name)
        if slots is None:
            if strict:
                raise ConcurrencySlotAcquisitionError(
                    f"Concurrency limits {[name]!r} must be created before acquiring slots "
                    "(create a pool of that name: `statewright pools set NAME SLOTS`).")
            continue
        if occupy > slots:
            raise ConcurrencySlotAcquisitionError(
                f"Cannot occupy {occupy} slots of {name!r}: it has {slots}.")
        limits[name] = slots
    return limits


LEASE_SECONDS = 3600.0
_held: dict[str, int] = {}  # slots this process holds now, by pool (for ``slots``)
_held_lock = threading.Lock()


def acquire(names: list[str], occupy: int, timeout_seconds: float | None,
            strict: bool, lease_duration: float | None = None) -> list[int]:
    """Lease ids of the slots taken (waiting while they are not free)."""
    limits = _limits(names, occupy, strict)
    if not limits:
        return []
    holder = f"{socket.gethostname()}:{os.getpid()}"
    deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
    pause = 0.01
    while True:
        ids = extras.call("lease_take", (sorted(limits), occupy, holder,
                                         lease_duration or LEASE_SECONDS))
        if ids is not None:
            with _held_lock:
                for name in limits:
                    _held[name] = _held.get(name, 0) + occupy
            return list(ids)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError(f"Attempt to acquire concurrency slots timed out after "
                               f"{timeout_seconds} second(s)")
        time.sleep(pause if left is None else min(pause, left))
        pause = min(pause * 2, 0.5)


def release(names: list[str], ids: list[int], occupy: int) -> None:
    extras.call("lease_release", ids)
    with _held_lock:
        for name in names:
            if name in _held:
                _held[name] -= occupy


def slots(name: str) -> int:
    """Slots of ``name`` this process holds now."""
    with _held_lock:
        return _held.get(name, 0)


@contextlib.contextmanager
def concurrency(names: str | list[str], occupy: int = 1, timeout_seconds: float | None = None,
                max_retries: int | None = None, strict: bool = False,
                **_: object) -> Iterator[None]:
    """Hold ``occupy`` slots of each named limit for the block."""
    wanted = [names] if isinstance(names, str) else list(names)
    lease = _.get("lease_duration")
    ids = acquire(wanted, occupy, timeout_seconds, strict,
                  float(lease) if isinstance(lease, int | float) else None)
    try:
        yield
    finally:
        if ids:
            release(wanted, ids, occupy)
