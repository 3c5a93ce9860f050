"""The door's events: what each state change tells the history table and the listeners."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection

from statewright.db import wakeups
from statewright.db.bulk import insert_many
from statewright.db.engine import after_commit
from statewright.db.tables import state_transition

ENTITY_TI = "task_instance"
ENTITY_RUN = "dag_run"
PROTECTED = frozenset({"state", "state_name", "id"})


@dataclass(frozen=True)
class PerRow:
    """A column's own value for each task instance a change moves (id → value), set by the
    change's statement itself (an id without a value gets NULL): the process of each started
    try, say, without a statement and a row version more per task instance."""

    values: Mapping[int, int | str | None]


@dataclass(frozen=True)
class TransitionEvent:
    entity: str
    entity_id: int
    dag_id: str
    run_id: str
    task_id: str | None
    frm: str | None
    to: str
    name: str
    try_number: int | None
    actor: str
    at: datetime
    map_index: int | None = None
    """The task instance's map index (-1 unmapped); ``None`` for a DAG run."""


@dataclass
class TransitionResult:
    changed: list[int] = field(default_factory=list)
    already: list[int] = field(default_factory=list)
    """Rows already in the target state: a repeated request answers as the first did."""
    lost: dict[int, str] = field(default_factory=dict)
    """Rows that were in another state (or another try) than the caller expected."""
    versions: dict[int, int | None] = field(default_factory=dict)
    """Task instances changed → the DAG version their try runs (as the change left it)."""

    @property
    def ok(self) -> bool:
        return not self.lost


Listener = Callable[[Sequence[TransitionEvent]], None]
_listeners: list[Listener] = []
_listeners_lock = threading.Lock()


def add_transition_listener(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` with the events of every committed transaction; returns a remover."""
    with _listeners_lock:
        _listeners.append(listener)

    def remove() -> None:
        with _listeners_lock, contextlib.suppress(ValueError):
            _listeners.remove(listener)

    return remove


def dispatch(events: list[TransitionEvent]) -> None:
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(events)
        except Exception:  # a listener never breaks the writer
            logging.getLogger(__name__).exception("transition listener failed")


def relay(events: Sequence[TransitionEvent]) -> None:
    """Call this process's listeners with events another process committed and sent here (the
    local executor's supervisor process), as if they had been committed here."""
    if events:
        dispatch(list(events))


HISTORY_COLUMNS = ("entity", "entity_id", "dag_id", "run_id", "task_id", "map_index",
                   "from_state", "to_state", "name", "message", "actor", "try_number", "at")


def emit(conn: Connection, events: list[TransitionEvent], message: str | None = None,
          *, notify: bool = True) -> None:
    if not events:
        return
    # One history row per event, through the bulk insert: on PostgreSQL one execution for the
    # batch, on SQLite the driver's own executemany, without SQLAlchemy's cost per bound row.
    insert_many(conn, state_transition, HISTORY_COLUMNS, [
        (e.entity, e.entity_id, e.dag_id, e.run_id, e.task_id, e.map_index, e.frm, e.to,
         e.name, message, e.actor, e.try_number, e.at) for e in events])
    if notify:
        wakeups.notify(conn, events)  # the loops of other processes, at commit
        after_commit(conn, lambda: dispatch(events))
