"""The Celery executor: queued task instances travel to ``statewright celery-worker`` processes
through a Celery broker (Redis or RabbitMQ).

The scheduler commits ``scheduled → queued`` and then calls :meth:`CeleryExecutor.queue_workloads`,
which sends one message per task instance: its id and the try number it had when it was queued,
to the Celery queue named by the task instance's ``queue`` column (the operator's ``queue=``).
A worker starts the try through the door, fenced on that try number, so a message that arrives
twice — redelivered after a worker died, or sent again after a queued timeout — starts at most
one try. There is no result backend: workers write outcomes to the database themselves, and the
database is what the scheduler reads.

:func:`make_celery_app` is shared by both sides, so that the executor and the workers agree on
the task name, the serializer and the queue declarations.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from celery import Celery
from kombu import Connection, Exchange, Queue
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import dispatch as dispatch_repo

log = logging.getLogger("statewright.executor.celery")

TASK_NAME = "statewright.run_task_instance"
IDENTITY = "celery"
"""The ``executor`` column of task instances queued to Celery. It names no process: any worker
consuming the queue may run them, whichever scheduler queued them."""
DEFAULT_QUEUE = "default"


def celery_queue(name: str) -> Queue:
    """The queue ``name``: a durable direct exchange of the same name, routed by its name."""
    return Queue(name, Exchange(name, type="direct", durable=True), routing_key=name,
                 durable=True)


def make_celery_app(broker_url: str, *, visibility_timeout: float = 3600.0,
                    queues: Sequence[str] = (DEFAULT_QUEUE,)) -> Celery:
    """A Celery app that talks to ``broker_url``; ``queues`` are the ones a worker consumes."""
    app = Celery("statewright", broker=broker_url, set_as_current=False)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        result_backend=None,
        task_ignore_result=True,
        task_store_errors_even_if_ignored=False,
        # A message is acknowledged when its try has ended, not when it is received: the
        # message of a worker that died is delivered again (and dropped if its try started).
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=DEFAULT_QUEUE,
        task_queues=[celery_queue(q) for q in queues],
        task_create_missing_queues=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": visibility_timeout},
        task_publish_retry=True,
        task_publish_retry_policy={"max_retries": 3, "interval_start": 0,
                                   "interval_step": 0.5, "interval_max": 1},
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_send_task_events=False,
        enable_utc=True,
    )
    return app


class CeleryExecutor:
    """The scheduler's side: sends messages, counts what is in flight. It never starts a try."""

    def __init__(
        self,
        engine: Engine,
        *,
        broker_url: str,
        parallelism: int = 8,
        visibility_timeout: float = 3600.0,
        clock: Clock = utcnow,
        app: Celery | None = None,
    ) -> None:
        self.engine = engine
        self.broker_url = broker_url
        self.parallelism = max(1, parallelism)
        self.clock = clock
        self.identity = IDENTITY
        self.app = app or make_celery_app(broker_url, visibility_timeout=visibility_timeout)
        self.sent = 0

    # -- executor interface --------------------------------------------------------------------

    def slots_available(self) -> int:
        """``parallelism`` less the task instances queued to or running on Celery (counted in
        the database, so several schedulers share one budget)."""
        with read_snapshot(self.engine) as conn:
            busy = dispatch_repo.in_flight(conn, self.identity)
        return max(0, self.parallelism - busy)

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        with read_snapshot(self.engine) as conn:
            rows = dispatch_repo.to_send(conn, ti_ids)
        if rows:
            self.send(rows)

    def send(self, rows: Sequence[Any]) -> list[Any]:
        """One message per row (``id``, ``try_number``, ``queue``); returns the rows whose
        message the broker did not take, which go back to ``scheduled``."""
        failed: list[tuple[Any, str]] = []
        done = 0
        try:
            with self.app.producer_or_acquire() as producer:
                for r in rows:
                    self._send_one(r, producer)
                    done += 1
        except Exception as exc:  # a broker that refused one message takes none of the rest
            failed = [(r, f"{type(exc).__name__}: {exc}") for r in rows[done:]]
        self.sent += len(rows) - len(failed)
        if failed:
            self._unqueue(failed)
        return [r for r, _ in failed]

    def start(self) -> None:
        """Nothing runs here: connections are made when the first message is sent."""

    def stop(self, timeout: float = 10.0, *, grace: float | None = None) -> None:
        """Close the broker connection; the tries belong to the Celery workers (and their own
        graceful stop), not to the scheduler's process."""
        self.app.close()

    # -- internals ---------------------------------------------------------------------------

    def _send_one(self, row: Any, producer: Any) -> None:
        queue = celery_queue(row.queue or DEFAULT_QUEUE)
        self.app.send_task(
            TASK_NAME, args=[int(row.id), int(row.try_number)], queue=queue,
            routing_key=queue.routing_key, exchange=queue.exchange, declare=[queue],
            producer=producer, ignore_result=True,
            argsrepr=f"({row.dag_id}.{row.task_id} run {row.run_id}, try {row.try_number})",
        )

    def _unqueue(self, failed: Sequence[tuple[Any, str]]) -> None:
        """Messages the broker refused: the task instances go back to ``scheduled`` (fenced on
        their try), so the scheduler queues them again instead of waiting for the queued
        timeout. Should such a message reach a worker after all, the fence drops it or it starts
        the one try it names."""
        for r, why in failed:
            log.error("could not send %s.%s (run %s) to the Celery broker at %s: %s",
                      r.dag_id, r.task_id, r.run_id, self._safe_url(), why)
        with transaction(self.engine) as conn:
            door.set_task_instance_state(
                conn, [], fenced=[(r.id, r.try_number) for r, _ in failed], frm=TI.QUEUED,
                to=TI.SCHEDULED, actor=Actor.EXECUTOR, now=self.clock(),
                message=f"the Celery broker did not take the message ({failed[0][1]}); "
                        "scheduled again")

    def _safe_url(self) -> str:
        try:
            return str(Connection(self.broker_url).as_uri())
        except Exception:
            return "(unparsable broker URL)"
