"""The second half of clearing or cancelling a running task instance: its try has stopped.

A clear moves a running task instance to ``restarting`` and a cancel to ``shutdown`` (named
Cancelling); the executor running the try sees that the try is no longer running in the database
and kills it (SIGTERM, then SIGKILL after a grace period). When the try has stopped — killed, or
it reported an outcome that lost the race — :func:`settle_stopped_tries` finishes the change:

- ``restarting`` → ``none``: the scheduler evaluates the task's dependencies again;
- ``shutdown`` (Cancelling) → ``failed`` named ``Cancelled``.

Each stopped try gets its ``task_instance_history`` row. If the executor itself died, nobody
would kill or settle the try: the scheduler's housekeeping calls :func:`settle_abandoned` for
such task instances once their last heartbeat is older than the zombie threshold, so a
restarting task instance never stays stuck (airflow#55045).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection

from statewright.core.states import TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import controls as controls_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.controls.common import RESET_DEFERRAL, history_row

log = logging.getLogger("statewright.controls")


def settle_stopped_tries(
    conn: Connection,
    pairs: Sequence[tuple[int, int]],
    *,
    now: datetime,
    actor: Actor,
    why: str = "the try has stopped",
) -> dict[int, TI]:
    """Finish clears and cancels of the given tries (id, try_number) that have stopped.

    Task instances in any other state, or at another try, are left alone. Returns the state
    each settled task instance reached.
    """
    rows = [r for r in controls_repo.tries(conn, pairs) if _stopping(r)]
    reached: dict[int, TI] = {}
    history = []
    for r in rows:
        if r.state == TI.RESTARTING.value:
            res = door.set_task_instance_state(
                conn, r.id, frm=TI.RESTARTING, to=TI.NONE, actor=actor, now=now,
                try_number=r.try_number, values=RESET_DEFERRAL,
                message=f"try {r.try_number} was cleared while it ran and {why}; "
                        "its dependencies are evaluated again")
            if res.changed:
                reached[r.id] = TI.NONE
                history.append(history_row(r, try_number=r.try_number, state=TI.RESTARTING,
                                           name=StateName.RESTARTING, now=now,
                                           message="killed: cleared by a user while it ran"))
        else:
            res = door.set_task_instance_state(
                conn, r.id, frm=TI.SHUTDOWN, to=TI.FAILED, actor=actor, now=now,
                try_number=r.try_number, name=StateName.CANCELLED, values=RESET_DEFERRAL,
                message=f"cancelled by a user; try {r.try_number} {why}")
            if res.changed:
                reached[r.id] = TI.FAILED
                history.append(history_row(r, try_number=r.try_number, state=TI.FAILED,
                                           name=StateName.CANCELLED, now=now,
                                           message="killed: the run was cancelled by a user"))
    ti_repo.add_history(conn, history)
    for r in rows:
        if r.id in reached:
            log.info("%s.%s (run %s) try %s stopped: now %s", r.dag_id, r.task_id, r.run_id,
                     r.try_number, reached[r.id].value)
    return reached


def settle_abandoned(conn: Connection, *, older_than: datetime, now: datetime,
                     actor: Actor = Actor.SCHEDULER) -> int:
    """Settle clears and cancels whose executor stopped heartbeating before ``older_than``."""
    rows = controls_repo.abandoned_stopping_tries(conn, older_than)
    if not rows:
        return 0
    return len(settle_stopped_tries(
        conn, [(r.id, r.try_number) for r in rows], now=now, actor=actor,
        why="no worker has reported on it since (its executor is gone)"))


def _stopping(row: object) -> bool:
    state = getattr(row, "state", None)
    if state == TI.RESTARTING.value:
        return True
    return state == TI.SHUTDOWN.value and getattr(row, "state_name", None) == \
        StateName.CANCELLING.value
