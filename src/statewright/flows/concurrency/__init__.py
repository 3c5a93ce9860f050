"""Prefect's global concurrency limits (``prefect.concurrency``) on statewright's pools.

``with concurrency("db", occupy=1):`` takes ``occupy`` slots of the pool named ``db`` for the
block; a caller waits while the pool's slots are taken (``timeout_seconds``: then
``TimeoutError``). The slots are counted per process (the task runs of one flow run, on its
threads); a name with no pool lets the block run at once, as Prefect does for a limit that
does not exist, unless ``strict=True``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from statewright.flows import extras

__all__ = ["ConcurrencySlotAcquisitionError", "acquire", "release", "slots"]


class ConcurrencySlotAcquisitionError(Exception):
    """A limit that does not exist under ``strict=True``, or asks more slots than it has."""


_cond = threading.Condition()
_taken: dict[str, int] = {}


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


def acquire(names: list[str], occupy: int, timeout_seconds: float | None,
            strict: bool) -> dict[str, int]:
    limits = _limits(names, occupy, strict)
    deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
    with _cond:
        while any(_taken.get(n, 0) + occupy > s for n, s in limits.items()):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"Attempt to acquire concurrency slots timed out after "
                                   f"{timeout_seconds} second(s)")
            _cond.wait(left)
        for name in limits:
            _taken[name] = _taken.get(name, 0) + occupy
    return limits


def release(limits: dict[str, int], occupy: int) -> None:
    with _cond:
        for name in limits:
            _taken[name] -= occupy
        _cond.notify_all()


def slots(name: str) -> int:
    """Slots of ``name`` taken in this process now."""
    with _cond:
        return _taken.get(name, 0)


@contextlib.contextmanager
def concurrency(names: str | list[str], occupy: int = 1, timeout_seconds: float | None = None,
                max_retries: int | None = None, strict: bool = False,
                **_: object) -> Iterator[None]:
    """Hold ``occupy`` slots of each named limit for the block."""
    wanted = [names] if isinstance(names, str) else list(names)
    limits = acquire(wanted, occupy, timeout_seconds, strict)
    try:
        yield
    finally:
        release(limits, occupy)
