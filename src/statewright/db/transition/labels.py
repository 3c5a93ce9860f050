"""The door's changes of a state's name and message (the state type stays)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import (
    Connection,
    insert,
    select,
    update,
)

from statewright.core.states import (
    RUN,
    TI,
    DagRunState,
    StateName,
    TaskInstanceState,
)
from statewright.core.transitions import Who
from statewright.db.tables import dag_run, state_transition, task_instance
from statewright.db.transition.events import ENTITY_RUN, ENTITY_TI, TransitionEvent, emit


def rename_task_instances(
    conn: Connection,
    ids: Iterable[int],
    *,
    state: TaskInstanceState,
    name: StateName,
    actor: Who,
    now: datetime,
    message: str | None = None,
) -> list[int]:
    """Change only the state *name* (e.g. Scheduled → Late); the type stays. Recorded in history."""
    c = task_instance.c
    rows = conn.execute(
        update(task_instance)
        .where(c.id.in_(list(ids)), c.state == TI(state).value, c.state_name != name.value)
        .values(state_name=name.value, updated_at=now)
        .returning(c.id, c.dag_id, c.run_id, c.task_id, c.try_number)
    ).all()
    events = [
        TransitionEvent(ENTITY_TI, r.id, r.dag_id, r.run_id, r.task_id, state.value, state.value,
                        name.value, r.try_number, actor.value, now)
        for r in rows
    ]
    emit(conn, events, message)
    return [r.id for r in rows]


def rename_dag_runs(
    conn: Connection,
    ids: Iterable[int],
    *,
    state: DagRunState,
    name: StateName,
    actor: Who,
    now: datetime,
    message: str | None = None,
) -> list[int]:
    """Change only the state *name* of DAG runs (e.g. Queued → Late). Recorded in history."""
    c = dag_run.c
    rows = conn.execute(
        update(dag_run)
        .where(c.id.in_(list(ids)), c.state == RUN(state).value, c.state_name != name.value)
        .values(state_name=name.value, updated_at=now)
        .returning(c.id, c.dag_id, c.run_id)
    ).all()
    events = [
        TransitionEvent(ENTITY_RUN, r.id, r.dag_id, r.run_id, None, state.value, state.value,
                        name.value, None, actor.value, now)
        for r in rows
    ]
    emit(conn, events, message)
    return [r.id for r in rows]


def note_task_instances(
    conn: Connection,
    notes: Iterable[tuple[int, str]],
    *,
    actor: Who,
    now: datetime,
) -> int:
    """Append a history row that changes nothing to each task instance: ``(id, message)``.

    The row repeats the current state and name (from = to), so the history tells what happened
    beside the state machine: a hook that raised, a decision that lost a race. No state changes.
    """
    wanted = dict(notes)
    if not wanted:
        return 0
    c = task_instance.c
    rows = conn.execute(
        select(c.id, c.dag_id, c.run_id, c.task_id, c.state, c.state_name, c.try_number)
        .where(c.id.in_(list(wanted)))
    ).all()
    if rows:
        conn.execute(insert(state_transition), [
            {"entity": ENTITY_TI, "entity_id": r.id, "dag_id": r.dag_id, "run_id": r.run_id,
             "task_id": r.task_id, "from_state": r.state, "to_state": r.state,
             "name": r.state_name, "message": wanted[r.id], "actor": actor.value,
             "try_number": r.try_number, "at": now}
            for r in rows
        ])
    return len(rows)


def note_dag_runs(
    conn: Connection,
    notes: Iterable[tuple[int, str]],
    *,
    actor: Who,
    now: datetime,
) -> int:
    """Like ``note_task_instances``, for DAG runs (e.g. a DAG-level callback that raised)."""
    wanted = dict(notes)
    if not wanted:
        return 0
    c = dag_run.c
    rows = conn.execute(
        select(c.id, c.dag_id, c.run_id, c.state, c.state_name).where(c.id.in_(list(wanted)))
    ).all()
    if rows:
        conn.execute(insert(state_transition), [
            {"entity": ENTITY_RUN, "entity_id": r.id, "dag_id": r.dag_id, "run_id": r.run_id,
             "task_id": None, "from_state": r.state, "to_state": r.state, "name": r.state_name,
             "message": wanted[r.id], "actor": actor.value, "try_number": None, "at": now}
            for r in rows
        ])
    return len(rows)
