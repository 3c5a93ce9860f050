"""The scheduler's housekeeping: tries whose process is gone end ``Crashed`` (zombies without a
heartbeat, and at start the tries of this host's dead processes), and task instances queued to an
executor that is gone, or queued too long, go back to ``scheduled``."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from statewright.core.retry import is_eligible_to_retry, retry_delay
from statewright.core.states import TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.controls.stopped import settle_abandoned

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.scheduler")
HOSTNAME = socket.gethostname()
ACTOR = Actor.SCHEDULER


def reap(scheduler: Scheduler, now: datetime) -> int:
    """Zombies (running, no heartbeat) and task instances queued past the timeout."""
    n = 0
    with transaction(scheduler.engine) as conn:
        zombies = ti_repo.zombies(conn, now - scheduler.config.zombie_threshold)
        n += _crash(scheduler, conn, zombies, now,
                    f"zombie: no heartbeat from the worker for more than "
                    f"{scheduler.config.zombie_threshold.total_seconds():.0f}s")
        n += _requeue(conn, _queued_by_dead_peers(scheduler, conn, now), now,
                      "the scheduler whose executor held it is gone; scheduled again")
        stale = ti_repo.queued_too_long(conn, now - scheduler.config.queued_timeout)
        n += _requeue(conn, stale, now,
                      "queued for longer than the queued timeout; scheduled again")
        # Clears and cancels whose executor is gone: the try cannot be running any more.
        n += settle_abandoned(conn, older_than=now - scheduler.config.zombie_threshold, now=now)
    return n


def _queued_by_dead_peers(scheduler: Scheduler, conn: Connection, now: datetime) -> list[Any]:
    """Task instances queued to the local executor of a scheduler whose job stopped
    heartbeating: no process will start them, so they need not wait the queued timeout."""
    silent_for = max(scheduler.config.zombie_threshold, 3 * scheduler.config.housekeeping_every)
    alive = {(j.hostname, j.pid) for j in job_repo.get_many(
        conn, job_repo.alive_ids(conn, "scheduler", now - silent_for)).values()}
    return [q for q in ti_repo.queued_by_executor_prefix(conn, "local:")
            if _local_owner(q.executor) not in alive]


def recover(scheduler: Scheduler, now: datetime) -> int:
    """At start: tries whose process on this host is gone end ``Crashed`` at once, and task
    instances queued by an executor on this host that is gone go back to ``scheduled``."""
    with transaction(scheduler.engine) as conn:
        running = [r for r in ti_repo.running_on_host(conn, HOSTNAME)
                   if r.pid and not pid_alive(r.pid)]
        n = _crash(scheduler, conn, running, now,
                   "the task process is gone (found when the scheduler started)")
        prefix = f"local:{HOSTNAME}:"
        queued = [q for q in ti_repo.queued_by_executor_prefix(conn, prefix)
                  if not pid_alive(int(q.executor.rsplit(":", 1)[1]))]
        n += _requeue(conn, queued, now, "the executor that held it is gone; scheduled again")
    if n:
        log.warning("recovered %d task instances left behind by a previous process", n)
    return n


def _requeue(conn: Connection, rows: Sequence[Any], now: datetime, msg: str) -> int:
    if not rows:
        return 0
    return len(door.set_task_instance_state(
        conn, [], fenced=[(r.id, r.try_number) for r in rows], frm=TI.QUEUED,
        to=TI.SCHEDULED, actor=ACTOR, now=now, message=msg).changed)


def _crash(scheduler: Scheduler, conn: Connection, rows: Sequence[Any], now: datetime,
           msg: str) -> int:
    """End running tries whose process is gone: up_for_retry or failed, named Crashed."""
    if not rows:
        return 0
    n = 0
    hashes = dag_repo.get_hashes(conn, {z.dag_id for z in rows})
    for z in rows:
        view = scheduler._view(conn, z.dag_id, hashes[z.dag_id]) if z.dag_id in hashes else None
        task = view.tasks.get(z.task_id) if view else None
        retries = task.retries if task else z.max_tries
        if is_eligible_to_retry(retries, z.try_number, max_tries=z.max_tries):
            delay = retry_delay(
                z.try_number, task.retry_delay if task else timedelta(0),
                exponential=task.retry_exponential_backoff if task else False,
                max_delay=task.max_retry_delay if task else None)
            res = door.set_task_instance_state(
                conn, z.id, frm=TI.RUNNING, to=TI.UP_FOR_RETRY, actor=ACTOR, now=now,
                try_number=z.try_number, name=StateName.CRASHED, message=msg,
                values={"next_retry_at": now + delay, **_TRY_ENDED})
        else:
            res = door.set_task_instance_state(
                conn, z.id, frm=TI.RUNNING, to=TI.FAILED, actor=ACTOR, now=now,
                try_number=z.try_number, name=StateName.CRASHED, message=msg,
                values=_TRY_ENDED)
        n += len(res.changed)
        if res.changed:
            log.warning("%s.%s try %s: %s", z.dag_id, z.task_id, z.try_number, msg)
    return n


# A crashed try ends: the next try starts afresh, not from a deferral's resume method or a
# sensor's reschedule.
_TRY_ENDED = {"next_method": None, "next_kwargs": None, "trigger_timeout": None,
              "first_poke_at": None, "poke_count": 0, "reschedule_date": None}


def _local_owner(executor: str) -> tuple[str, int] | None:
    """``local:HOST:PID`` → (HOST, PID): the scheduler process whose executor queued it."""
    host, _, pid = executor[len("local:"):].rpartition(":")
    return (host, int(pid)) if pid.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` running on this host? A zombie (exited, not yet reaped) is not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
