"""A pool step's transaction that failed, written part by part: one bad task instance ends
itself, not the batch it came in.

A pool step starts the next tries in one transaction and applies the finished tries (and
settles the stopped ones) in another. When one of them fails for a reason the database would
give again (a task instance whose DAG's stored form or upstream value cannot be read, a value
the database refuses) rather than a passing one (the server unreachable, a lock timeout:
``is_transient``), failing the whole transaction again on every pass would keep every other
task instance of the batch queued forever behind the one. So each part is written alone, in its
own transaction: a finished try, the stopped tries, each try to start. A try that cannot start
even alone ends ``failed`` with the error as its message (``workload.fail_unstartable``); a
finished try whose outcome cannot be written is left to the zombie reaper, as when the database
is unreachable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from statewright.core.states import TI
from statewright.services.worker.pool_parts import NOT_STARTED, START_FAILED, Done, notify

log = logging.getLogger("statewright.worker.pool")


@dataclass
class Written:
    reached: dict[int, Any] = field(default_factory=dict)
    """Finished tries applied: task instance → the state its try reached."""
    workloads: list[Any] = field(default_factory=list)
    """Tries started."""
    unapplied: set[int] = field(default_factory=set)
    """Finished tries whose outcome could not be written."""
    ended: dict[int, str] = field(default_factory=dict)
    """Tries that did not start, and how their submission ended (``failed``, start failed)."""


def is_transient(exc: BaseException) -> bool:
    """An error that the same statements may not meet again: the connection or the server
    (unreachable, restarted, a lock or statement timeout, the pool exhausted)."""
    return isinstance(exc, (OperationalError, InterfaceError, DisconnectionError, PoolTimeout))


Write = Callable[[Sequence[Any], Sequence[Any], Sequence[int], Mapping[int, int],
                  Mapping[int, int]], Written]
FailUnstartable = Callable[[int, "int | None", BaseException], bool]


def write_guarded(write: Write, fail_unstartable: FailUnstartable, results: Sequence[Any],
                  stopped: Sequence[Any], ids: Sequence[int], pids: Mapping[int, int],
                  fences: Mapping[int, int], *, if_passing: Sequence[tuple[Any, Done]]
                  ) -> Written:
    """``write`` (one of the pool step's transactions); when it fails with an error the
    database would give again, each part written alone; when it fails with a passing one, the
    submitters are told ``if_passing`` and the error is raised (the step is tried again)."""
    try:
        return write(results, stopped, ids, pids, fences)
    except Exception as exc:
        if is_transient(exc):
            for on_done, done in if_passing:
                notify(on_done, done)
            raise
        log.exception("a pool step's transaction failed; writing each of its %d parts alone",
                      len(results) + len(ids) + bool(stopped))
        return write_alone(write, fail_unstartable, results, stopped, ids, pids, fences)


def write_alone(write: Write, fail_unstartable: FailUnstartable, results: Sequence[Any],
                stopped: Sequence[Any], ids: Sequence[int], pids: Mapping[int, int],
                fences: Mapping[int, int]) -> Written:
    """``write`` (the pool step's one transaction) called once per part."""
    out = Written()
    for result in results:
        try:
            out.reached.update(write([result], [], [], pids, fences).reached)
        except Exception:
            log.exception("the outcome of task instance %s could not be written",
                          result[0].ti_id)
            out.unapplied.add(result[0].ti_id)
    if stopped:
        try:
            write([], stopped, [], pids, fences)
        except Exception:
            log.exception("the stopped tries could not be settled; the zombie reaper ends them")
    for ti_id in ids:
        try:
            out.workloads += write([], [], [ti_id], pids, fences).workloads
        except Exception as exc:
            out.ended[ti_id] = _end_unstartable(fail_unstartable, ti_id, fences.get(ti_id), exc)
    return out


def _end_unstartable(fail_unstartable: FailUnstartable, ti_id: int, fence: int | None,
                     exc: BaseException) -> str:
    if is_transient(exc):
        log.warning("task instance %s could not start: %s", ti_id, exc)
        return START_FAILED
    log.error("task instance %s could not start (%s: %s): it ends failed", ti_id,
              type(exc).__name__, exc)
    try:
        ended = fail_unstartable(ti_id, fence, exc)
    except Exception:
        log.exception("task instance %s could not be ended failed", ti_id)
        return START_FAILED
    return TI.FAILED.value if ended else NOT_STARTED
