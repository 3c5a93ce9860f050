"""The door's creation of DAG runs and task instances, in their first states, with history."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    insert,
    literal,
    select,
)

from statewright.core.states import (
    RUN,
    TI,
    StateName,
    default_run_name,
    default_ti_name,
)
from statewright.core.transitions import Who, task_instance_edge
from statewright.db.bulk import chunks, insert_many
from statewright.db.engine import after_commit
from statewright.db.repositories import dag_versions, deadlines
from statewright.db.tables import dag_run, state_transition, task_instance
from statewright.db.transition.change import set_task_instance_state
from statewright.db.transition.events import (
    ENTITY_RUN,
    ENTITY_TI,
    PROTECTED,
    TransitionEvent,
    dispatch,
    emit,
)


def create_dag_run(
    conn: Connection,
    *,
    dag_id: str,
    run_id: str,
    run_type: str,
    actor: Who,
    now: datetime,
    logical_date: datetime | None = None,
    data_interval_start: datetime | None = None,
    data_interval_end: datetime | None = None,
    run_after: datetime | None = None,
    conf: Mapping[str, Any] | None = None,
    triggered_by: str | None = None,
    name: StateName | None = None,
) -> int:
    """Insert a DAG run in ``queued`` (queued_at set) and record its first history row."""
    state_name = name or default_run_name(RUN.QUEUED)
    run_pk = conn.execute(
        insert(dag_run)
        .values(
            dag_id=dag_id,
            run_id=run_id,
            run_type=run_type,
            logical_date=logical_date,
            data_interval_start=data_interval_start,
            data_interval_end=data_interval_end,
            run_after=run_after or now,
            state=RUN.QUEUED.value,
            state_name=state_name.value,
            conf=dict(conf or {}),
            triggered_by=triggered_by or actor.value,
            queued_at=now,
            updated_at=now,
            clear_number=0,
        )
        .returning(dag_run.c.id)
    ).scalar_one()
    dag_versions.stamp_runs(conn, [run_pk])
    deadlines.create_for_runs(conn, [run_pk], now)
    emit(
        conn,
        [TransitionEvent(ENTITY_RUN, run_pk, dag_id, run_id, None, None, RUN.QUEUED.value,
                         state_name.value, None, actor.value, now)],
    )
    return int(run_pk)


def create_task_instances(
    conn: Connection,
    *,
    dag_run_id: int,
    dag_id: str,
    run_id: str,
    rows: Sequence[Mapping[str, Any]],
    actor: Who,
    now: datetime,
) -> list[int]:
    """Insert task instances in state ``none``. ``rows`` hold task_id and per-task columns."""
    if not rows:
        return []
    name = default_ti_name(TI.NONE).value
    keys = list(dict.fromkeys(k for row in rows for k in row))
    insert_many(
        conn, task_instance, ("dag_run_id", "dag_id", "run_id", *keys),
        [(dag_run_id, dag_id, run_id, *row) for row in _shape_rows(rows, keys)],
        {**{k: v for k, v in _TI_DEFAULTS.items() if k not in keys},
         "state": TI.NONE.value, "state_name": name, "updated_at": now},
    )
    dag_versions.stamp_task_instances(conn, [dag_run_id])
    created = conn.execute(
        select(task_instance.c.id, task_instance.c.task_id, task_instance.c.map_index).where(
            task_instance.c.dag_run_id == dag_run_id,
            task_instance.c.task_id.in_([r["task_id"] for r in rows]),
            task_instance.c.map_index.in_({int(r.get("map_index", -1)) for r in rows}),
        )
    ).all()
    emit(
        conn,
        [
            TransitionEvent(ENTITY_TI, pk, dag_id, run_id, tid, None, TI.NONE.value, name, 0,
                            actor.value, now, mi)
            for pk, tid, mi in created
        ],
        notify=False,  # recorded; listeners act on the run's creation, not on each task's
    )
    return [pk for pk, _, _ in created]


def create_running_task_instance(
    conn: Connection,
    *,
    dag_run_id: int,
    dag_id: str,
    run_id: str,
    task_id: str,
    values: Mapping[str, Any],
    actor: Who,
    now: datetime,
) -> int:
    """Insert a task instance that starts its first try at once (a flow's task call):
    ``none`` (Pending) then ``running`` (Running), both in the history, in two statements."""
    task_instance_edge(TI.NONE, TI.RUNNING, actor)
    bad = PROTECTED & values.keys()
    if bad:
        raise ValueError(f"the door sets {sorted(bad)} itself")
    running = StateName.RUNNING.value
    pk = conn.execute(_INSERT_RUNNING_TI, {
        **_TI_DEFAULTS, **values, "dag_run_id": dag_run_id, "dag_id": dag_id,
        "run_id": run_id, "task_id": task_id, "state": TI.RUNNING.value,
        "state_name": running, "try_number": 1, "start_date": now,
        "last_heartbeat_at": now, "updated_at": now,
    }).scalar_one()
    event = TransitionEvent(ENTITY_TI, pk, dag_id, run_id, task_id, TI.NONE.value,
                            TI.RUNNING.value, running, 1, actor.value, now)
    created = TransitionEvent(ENTITY_TI, pk, dag_id, run_id, task_id, None, TI.NONE.value,
                              default_ti_name(TI.NONE).value, 0, actor.value, now)
    emit(conn, [created, event], notify=False)  # both in the history; listeners hear the start
    after_commit(conn, lambda: dispatch([event]))
    return int(pk)


_INSERT_RUNNING_TI = insert(task_instance).returning(task_instance.c.id)


@dataclass(frozen=True)
class NewDagRun:
    """One run for ``create_dag_runs``: its columns and the rows of its task instances."""

    dag_id: str
    run_id: str
    run_type: str
    task_rows: Sequence[Mapping[str, Any]]
    logical_date: datetime | None = None
    data_interval_start: datetime | None = None
    data_interval_end: datetime | None = None
    run_after: datetime | None = None
    conf: Mapping[str, Any] | None = None
    triggered_by: str | None = None


def create_dag_runs(
    conn: Connection, runs: Sequence[NewDagRun], *, actor: Who, now: datetime
) -> list[int]:
    """Insert many runs in ``queued`` and their task instances in ``none``, in a few statements.

    The same rows, history and events as ``create_dag_run`` + ``create_task_instances`` for each
    run; returns the runs' keys in the order given. The caller makes sure no run id exists yet.
    """
    if not runs:
        return []
    run_name = default_run_name(RUN.QUEUED).value
    ti_name = default_ti_name(TI.NONE).value
    queued, none, who = RUN.QUEUED.value, TI.NONE.value, actor.value
    insert_many(
        conn, dag_run,
        ("dag_id", "run_id", "run_type", "logical_date", "data_interval_start",
         "data_interval_end", "run_after", "conf", "triggered_by"),
        [(r.dag_id, r.run_id, r.run_type, r.logical_date, r.data_interval_start,
          r.data_interval_end, r.run_after or now, dict(r.conf or {}),
          r.triggered_by or who) for r in runs],
        {"state": queued, "state_name": run_name, "queued_at": now, "updated_at": now,
         "clear_number": 0},
    )
    position = {(r.dag_id, r.run_id): i for i, r in enumerate(runs)}
    run_ids = sorted({r.run_id for r in runs})
    found: dict[int, int] = {}
    for chunk in chunks(sorted({r.dag_id for r in runs}), 500):
        for pk, dag_id, run_id in conn.execute(
            select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id).where(
                dag_run.c.dag_id.in_(chunk), dag_run.c.run_id.in_(run_ids))
        ).all():
            i = position.get((dag_id, run_id))
            if i is not None:
                found[i] = pk
    run_pks = [found[i] for i in range(len(runs))]

    shapes = {id(r.task_rows): r.task_rows for r in runs}  # runs of one DAG share theirs
    keys = list(dict.fromkeys(k for rows in shapes.values() for row in rows for k in row))
    shaped = {key: _shape_rows(rows, keys) for key, rows in shapes.items()}
    ti_rows: list[tuple[Any, ...]] = []
    for pk, r in zip(run_pks, runs, strict=True):
        ti_rows += [(pk, r.dag_id, r.run_id, *row) for row in shaped[id(r.task_rows)]]
    insert_many(
        conn, task_instance, ("dag_run_id", "dag_id", "run_id", *keys), ti_rows,
        {**{k: v for k, v in _TI_DEFAULTS.items() if k not in keys},
         "state": none, "state_name": ti_name, "updated_at": now},
    )
    dag_versions.stamp_runs(conn, run_pks)
    deadlines.create_for_runs(conn, run_pks, now)

    insert_many(
        conn, state_transition, ("entity_id", "dag_id", "run_id"),
        [(pk, r.dag_id, r.run_id) for pk, r in zip(run_pks, runs, strict=True)],
        {"entity": ENTITY_RUN, "to_state": queued, "name": run_name, "actor": who, "at": now},
    )
    events = [
        TransitionEvent(ENTITY_RUN, pk, r.dag_id, r.run_id, None, None, queued, run_name,
                        None, who, now)
        for pk, r in zip(run_pks, runs, strict=True)
    ]
    # The task instances' creation rows go to the history in one statement per chunk; only the
    # runs' creation is dispatched to listeners (nobody acts on a task instance created in none).
    c = task_instance.c
    for chunk in chunks(run_pks, 500):
        conn.execute(insert(state_transition).from_select(
            ["entity", "entity_id", "dag_id", "run_id", "task_id", "map_index", "to_state",
             "name", "actor", "try_number", "at"],
            select(literal(ENTITY_TI), c.id, c.dag_id, c.run_id, c.task_id, c.map_index,
                   literal(none),
                   literal(ti_name), literal(who), literal(0),
                   literal(now, state_transition.c.at.type))
            .where(c.dag_run_id.in_(chunk)),
        ))
    after_commit(conn, lambda: dispatch(events))
    return run_pks


def _shape_rows(rows: Sequence[Mapping[str, Any]], keys: list[str]) -> list[tuple[Any, ...]]:
    """Rows as tuples in ``keys`` order (missing columns take their defaults)."""
    if not rows:  # a run with no task instances yet (a flow's)
        return []
    keyset = set(keys)
    getter = operator.itemgetter(*keys)
    one = len(keys) == 1
    if all(row.keys() == keyset for row in rows):
        return [(getter(row),) if one else getter(row) for row in rows]
    defaults = {k: _TI_DEFAULTS.get(k) for k in keys}
    return [(getter(m),) if one else getter(m) for m in ({**defaults, **row} for row in rows)]


_TI_DEFAULTS: dict[str, Any] = {
    "map_index": -1, "try_number": 0, "max_tries": 0, "priority_weight": 1,
    "pool": "default_pool", "pool_slots": 1, "queue": "default", "operator": None,
    "poke_count": 0,
}


# -- task instances ---------------------------------------------------------------------------


def expand_mapped_task(
    conn: Connection,
    ti_id: int,
    *,
    length: int,
    actor: Who,
    now: datetime,
) -> int:
    """Expand the unexpanded task instance ``ti_id`` (map index -1, in ``none``) of a mapped
    task whose dependencies are met into ``length`` instances, all ``scheduled``; returns how
    many task instances there are now (0: the row was no longer unexpanded in ``none`` —
    another scheduler expanded it — and was left alone).

    As Airflow's ``expand_mapped_task``: the row itself becomes map index 0; map indexes
    1 .. length-1 are inserted with the row's columns, in one statement (a counting CTE), and
    their history rows (created, in ``scheduled``) in another."""
    message = f"expanded into {length} task instances"
    res = set_task_instance_state(conn, ti_id, frm=TI.NONE, to=TI.SCHEDULED, actor=actor,
                                  now=now, message=message, values={"map_index": 0})
    if not res.changed:
        return 0
    if length <= 1:
        return 1
    _insert_map_indexes(conn, ti_id, range(1, length), actor=actor, now=now, message=message)
    return length


def add_map_indexes(
    conn: Connection,
    ti_id: int,
    map_indexes: range,
    *,
    actor: Who,
    now: datetime,
    message: str,
) -> int:
    """New ``scheduled`` instances of the mapped task of task instance ``ti_id`` (a cleared
    mapped task whose upstream now returns more items): its columns, these map indexes."""
    return _insert_map_indexes(conn, ti_id, map_indexes, actor=actor, now=now, message=message)


def _insert_map_indexes(conn: Connection, ti_id: int, map_indexes: range, *, actor: Who,
                        now: datetime, message: str) -> int:
    """Insert the instances ``map_indexes`` (scheduled) of the task of ``ti_id`` in one
    statement (a counting CTE), and their history rows (created) in another."""
    if not map_indexes:
        return 0
    c = task_instance.c
    row = conn.execute(select(task_instance).where(c.id == ti_id)).one()._mapping
    same = {k: row[k] for k in ("dag_run_id", "dag_id", "run_id", "task_id", "max_tries",
                                "operator", "priority_weight", "pool", "pool_slots", "queue",
                                "dag_version_id")}
    name = default_ti_name(TI.SCHEDULED).value
    constants = {**same, "state": TI.SCHEDULED.value, "state_name": name, "try_number": 0,
                 "poke_count": 0, "scheduled_at": now, "updated_at": now,
                 "state_message": message}
    first, last = map_indexes.start, map_indexes.stop - 1
    seq = select(literal(first).label("i")).cte("map_indexes", recursive=True)
    seq = seq.union_all(select(seq.c.i + 1).where(seq.c.i < last))
    conn.execute(insert(task_instance).from_select(
        [*constants, "map_index"],
        select(*(literal(v, c[k].type) for k, v in constants.items()), seq.c.i)))
    conn.execute(insert(state_transition).from_select(
        ["entity", "entity_id", "dag_id", "run_id", "task_id", "map_index", "to_state", "name",
         "message", "actor", "try_number", "at"],
        select(literal(ENTITY_TI), c.id, c.dag_id, c.run_id, c.task_id, c.map_index,
               literal(TI.SCHEDULED.value), literal(name), literal(message),
               literal(actor.value), literal(0), literal(now, state_transition.c.at.type))
        .where(c.dag_run_id == same["dag_run_id"], c.task_id == same["task_id"],
               c.map_index >= first, c.map_index <= last),
    ))
    return len(map_indexes)
