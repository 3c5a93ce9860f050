"""Handing a workload to its task process, or saying why it cannot be handed.

A workload carries what callers gave (the run's ``conf``) and what upstream tasks returned: one
nested past the input limits, or that cannot be pickled at all (a conf 500 lists deep stops
pickle with ``RecursionError``), never reaches a task process. The pool fails its try with the
reason (through the door, like any ended try) and frees the process, instead of keeping a try
``running`` that no process runs.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from statewright.core.limits import InputLimits, InputTooLarge, check_value
from statewright.services.worker.outcome import FAIL_NO_RETRY, TryResult
from statewright.services.worker.task_runner import HOSTNAME
from statewright.services.worker.workload import Workload

log = logging.getLogger("statewright.worker.pool")


def unsendable_reason(w: Workload, limits: InputLimits) -> str | None:
    """Why ``w`` does not pass the input limits (its conf: depth, items, size; its upstream
    values: depth), or None."""
    if not w.conf and not w.xcoms and not w.pushed:  # nothing to measure (most tries)
        return None
    deep_only = replace(limits, max_items=2**62, max_bytes=2**62)
    try:
        check_value(w.conf, limits, what="the run's conf")
        check_value(w.xcoms, deep_only, what="an upstream task's value", check_bytes=False)
        check_value(w.pushed, deep_only, what="an upstream task's pushed value",
                    check_bytes=False)
    except InputTooLarge as exc:
        return f"the try was not started: {str(exc).replace(' Nothing was changed.', '')}"
    return None


def send_or_fail(conn: Any, w: Workload, limits: InputLimits, *, pid: int | None
                 ) -> TryResult | None:
    """Send ``w`` down ``conn`` (a task process's pipe). None when it was sent, else the failed
    result of its try, saying why: nothing was written to the pipe (``Connection.send``
    pickles the whole workload before writing), so the process stays usable. A broken pipe
    raises ``OSError``."""
    why = unsendable_reason(w, limits)
    if why is None:
        try:
            conn.send(w)
            return None
        except OSError:
            raise
        except Exception as exc:  # RecursionError, PicklingError, TypeError, MemoryError, …
            detail = (str(exc).splitlines() or [""])[0][:300]
            why = (f"the try could not be handed to a task process: {type(exc).__name__}: "
                   f"{detail}")
    log.error("%s.%s try %s: %s", w.dag_id, w.task_id, w.try_number, why)
    return TryResult.of(w, kind=FAIL_NO_RETRY, error=why, hostname=HOSTNAME, pid=pid)
