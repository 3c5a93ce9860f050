"""The one door for state changes of task instances and DAG runs.

Every write of a ``state`` column goes through this module. Each change:

1. is checked against the allowlist in ``statewright.core.transitions`` (``InvalidTransition``);
2. is applied as a compare-and-set: ``UPDATE … SET state=:to WHERE id IN (…) AND state=:from``
   (and ``AND try_number=:n`` when the caller fences on a try);
3. sets the timestamps the seeds attach to the target state;
4. appends one ``state_transition`` row per changed row, in the same transaction;
5. hands the events to the registered listeners after the transaction commits.

A lost race (the row was no longer in the from-state) is reported in ``TransitionResult.lost``,
never overwritten; a request for the edge already taken is reported in ``already``.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    DateTime,
    String,
    bindparam,
    case,
    func,
    insert,
    literal,
    literal_column,
    select,
    tuple_,
    update,
)
from sqlalchemy.sql.elements import ClauseElement, ColumnElement

from statewright.core.states import (
    RUN,
    RUN_TERMINAL,
    TI,
    DagRunState,
    StateName,
    TaskInstanceState,
    default_run_name,
    default_ti_name,
)
from statewright.core.transitions import Who, dag_run_edge, task_instance_edge
from statewright.db.bulk import chunks, insert_many
from statewright.db.engine import after_commit
from statewright.db.repositories import dag_versions, deadlines
from statewright.db.repositories import task_state as task_state_repo
from statewright.db.tables import dag_run, state_transition, task_instance

ENTITY_TI = "task_instance"
ENTITY_RUN = "dag_run"

# Target states whose reaching ends a try (or the wait for one): end_date and duration are set.
_TI_ENDS = frozenset(
    {TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED, TI.UP_FOR_RETRY}
)
_PROTECTED = frozenset({"state", "state_name", "id"})


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


def _dispatch(events: list[TransitionEvent]) -> None:
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
        _dispatch(list(events))


_INSERT_TRANSITION = insert(state_transition)


def _emit(conn: Connection, events: list[TransitionEvent], message: str | None = None,
          *, dispatch: bool = True) -> None:
    if not events:
        return
    conn.execute(
        _INSERT_TRANSITION,
        [
            {
                "entity": e.entity,
                "entity_id": e.entity_id,
                "dag_id": e.dag_id,
                "run_id": e.run_id,
                "task_id": e.task_id,
                "map_index": e.map_index,
                "from_state": e.frm,
                "to_state": e.to,
                "name": e.name,
                "message": message,
                "actor": e.actor,
                "try_number": e.try_number,
                "at": e.at,
            }
            for e in events
        ],
    )
    if dispatch:
        after_commit(conn, lambda: _dispatch(events))


# -- creation -------------------------------------------------------------------------------


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
    _emit(
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
    values = [
        {
            "dag_run_id": dag_run_id,
            "dag_id": dag_id,
            "run_id": run_id,
            "map_index": -1,
            "try_number": 0,
            "max_tries": 0,
            "priority_weight": 1,
            "pool": "default_pool",
            "pool_slots": 1,
            "queue": "default",
            "operator": None,
            "poke_count": 0,
            **dict(r),
            "state": TI.NONE.value,
            "state_name": name,
            "updated_at": now,
        }
        for r in rows
    ]
    conn.execute(insert(task_instance), values)
    dag_versions.stamp_task_instances(conn, [dag_run_id])
    created = conn.execute(
        select(task_instance.c.id, task_instance.c.task_id, task_instance.c.map_index).where(
            task_instance.c.dag_run_id == dag_run_id,
            task_instance.c.task_id.in_([r["task_id"] for r in rows]),
            task_instance.c.map_index.in_({int(r.get("map_index", -1)) for r in rows}),
        )
    ).all()
    _emit(
        conn,
        [
            TransitionEvent(ENTITY_TI, pk, dag_id, run_id, tid, None, TI.NONE.value, name, 0,
                            actor.value, now, mi)
            for pk, tid, mi in created
        ],
        dispatch=False,  # recorded; listeners act on the run's creation, not on each task's
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
    bad = _PROTECTED & values.keys()
    if bad:
        raise ValueError(f"the door sets {sorted(bad)} itself")
    running = StateName.RUNNING.value
    pk = conn.execute(_INSERT_RUNNING_TI, {
        **_TI_DEFAULTS, **values, "dag_run_id": dag_run_id, "dag_id": dag_id,
        "run_id": run_id, "task_id": task_id, "state": TI.RUNNING.value,
        "state_name": running, "try_number": 1, "start_date": now,
        "last_heartbeat_at": now, "updated_at": now,
    }).scalar_one()
    base = {"entity": ENTITY_TI, "entity_id": pk, "dag_id": dag_id, "run_id": run_id,
            "task_id": task_id, "message": None, "actor": actor.value, "at": now}
    conn.execute(_INSERT_TRANSITION, [
        {**base, "from_state": None, "to_state": TI.NONE.value,
         "name": default_ti_name(TI.NONE).value, "try_number": 0},
        {**base, "from_state": TI.NONE.value, "to_state": TI.RUNNING.value, "name": running,
         "try_number": 1},
    ])
    event = TransitionEvent(ENTITY_TI, pk, dag_id, run_id, task_id, TI.NONE.value,
                            TI.RUNNING.value, running, 1, actor.value, now)
    after_commit(conn, lambda: _dispatch([event]))
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
    after_commit(conn, lambda: _dispatch(events))
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


def set_task_instance_state(
    conn: Connection,
    ids: int | Iterable[int],
    *,
    frm: TaskInstanceState | Collection[TaskInstanceState],
    to: TaskInstanceState,
    actor: Who,
    now: datetime,
    name: StateName | None = None,
    message: str | None = None,
    try_number: int | None = None,
    fenced: Iterable[tuple[int, int]] | None = None,
    increment_try: bool = False,
    values: Mapping[str, Any] | None = None,
) -> TransitionResult:
    """Move task instances ``ids`` from ``frm`` (one state or several) to ``to``.

    ``try_number`` (or ``fenced``: pairs of id and try number) fences the change to one try: a
    report for try 3 can never change try 4. ``increment_try`` starts a new try (try_number+1).
    ``values`` sets other columns in the same statement.
    """
    to = TI(to)
    froms = [TI(frm)] if isinstance(frm, str) else [TI(f) for f in frm]
    for f in froms:
        task_instance_edge(f, to, actor)
    extra = dict(values or {})
    bad = _PROTECTED & extra.keys()
    if bad:
        raise ValueError(f"the door sets {sorted(bad)} itself")

    pairs = list(fenced) if fenced is not None else None
    id_list = [p[0] for p in pairs] if pairs is not None else (
        [ids] if isinstance(ids, int) else list(ids)
    )
    result = TransitionResult()
    if not id_list:
        return result

    fence_mode = "pairs" if pairs is not None else ("try" if try_number is not None else "ids")
    stmt, params = _ti_update(conn, to, fence_mode, increment_try, name, message, extra, now)
    params["w_ids"] = id_list
    if pairs is not None:
        params["w_pairs"] = pairs
    elif try_number is not None:
        params["w_try"] = try_number

    events: list[TransitionEvent] = []
    for f in froms:
        rows = conn.execute(stmt, {**params, "w_from": f.value}).all()
        for row in rows:
            result.changed.append(row.id)
            result.versions[row.id] = row.dag_version_id
            events.append(
                TransitionEvent(ENTITY_TI, row.id, row.dag_id, row.run_id, row.task_id, f.value,
                                to.value, row.state_name, row.try_number, actor.value, now,
                                row.map_index)
            )
    _emit(conn, events, message)

    missing = set(id_list) - set(result.changed)
    if missing:
        c = task_instance.c
        for row in conn.execute(
            select(c.id, c.state, c.try_number).where(c.id.in_(missing))
        ).all():
            fence = dict(pairs).get(row.id) if pairs is not None else try_number
            same_try = fence is None or row.try_number == fence
            if row.state == to.value and same_try:
                result.already.append(row.id)
            else:
                result.lost[row.id] = f"{row.state} (try {row.try_number})"
        for pk in missing - set(result.already) - set(result.lost):
            result.lost[pk] = "missing"
    return result


def _ti_sets(to: TaskInstanceState, increment_try: bool, name: StateName | None,
             now: datetime) -> tuple[dict[str, Any], set[str]]:
    """What the door sets besides the caller's values: the state, its name and the timestamps
    the target state carries; and the columns set to an expression of the row (built by
    ``_ti_exprs``)."""
    plain: dict[str, Any] = {"state": to.value, "updated_at": now}
    exprs: set[str] = set()
    if name is not None:
        plain["state_name"] = name.value
    elif to is TI.RUNNING:
        exprs.add("state_name")  # Running, or Retrying after the first try
    else:
        plain["state_name"] = default_ti_name(to).value
    if increment_try:
        exprs.add("try_number")
        if to is TI.RUNNING:
            exprs.add("dag_version_id")  # a try runs the DAG's code as it is when it starts
    if to is TI.SCHEDULED:
        plain["scheduled_at"] = now
    elif to is TI.QUEUED:
        plain["queued_at"] = now
    elif to is TI.RUNNING:
        plain["last_heartbeat_at"] = now
        if increment_try:
            plain.update(start_date=now, end_date=None, duration=None)
    elif to in _TI_ENDS:
        plain["end_date"] = now
        exprs.add("duration")
    return plain, exprs


def _ti_exprs(conn: Connection, keys: Collection[str], increment_try: bool) -> dict[str, Any]:
    """The expressions of ``_ti_sets``: the moment is the bound parameter ``e_now``, the state
    names ``e_retrying`` / ``e_running``."""
    c = task_instance.c
    new_try = c.try_number + 1 if increment_try else c.try_number
    out: dict[str, Any] = {}
    for k in keys:
        if k == "try_number":
            out[k] = c.try_number + 1
        elif k == "state_name":
            out[k] = case((new_try > 1, bindparam("e_retrying")), else_=bindparam("e_running"))
        elif k == "dag_version_id":
            out[k] = dag_versions.latest_id(c.dag_id)
        elif k == "duration":
            out[k] = case((c.start_date.is_(None), None),
                          else_=_seconds_between(conn, c.start_date))
        else:  # pragma: no cover - _ti_sets names no other
            raise AssertionError(k)
    return out


_RETURNING = (task_instance.c.id, task_instance.c.dag_id, task_instance.c.run_id,
              task_instance.c.task_id, task_instance.c.try_number, task_instance.c.state_name,
              task_instance.c.map_index, task_instance.c.dag_version_id)


_ti_updates: dict[tuple[Any, ...], Any] = {}
_ti_updates_lock = threading.Lock()


def _ti_update(conn: Connection, to: TaskInstanceState, fence: str, increment_try: bool,
               name: StateName | None, message: str | None, extra: Mapping[str, Any],
               now: datetime) -> tuple[Any, dict[str, Any]]:
    """The compare-and-set statement for this shape of change and its parameters.

    The values are bound parameters, so a shape's statement is built once and reused (building
    a statement costs more than SQLite takes to run it). A shape is the fence, whether a try
    starts, the columns set and which of them are expressions of the row. A caller's value
    that is itself an SQL expression goes into the statement, which is then built for the
    call alone."""
    plain, expr_set = _ti_sets(to, increment_try, name, now)
    plain["state_message"] = message
    inline = {k: v for k, v in extra.items() if isinstance(v, ClauseElement)}
    plain.update({k: v for k, v in extra.items() if k not in inline})
    exprs = tuple(sorted(expr_set - extra.keys()))
    key = (conn.dialect.name, fence, increment_try, exprs, tuple(sorted(plain)))
    stmt = None if inline else _ti_updates.get(key)
    if stmt is None:
        c = task_instance.c
        sets: dict[str, Any] = {k: bindparam(f"v_{k}", type_=c[k].type) for k in plain}
        sets.update(_ti_exprs(conn, exprs, increment_try))
        sets.update(inline)
        stmt = update(task_instance).where(_state_filter(conn) == bindparam("w_from"))
        if fence == "pairs":  # the ids too: SQLite finds rows by a list of ids, not of pairs
            stmt = stmt.where(c.id.in_(bindparam("w_ids", expanding=True)),
                              tuple_(c.id, c.try_number).in_(
                                  bindparam("w_pairs", expanding=True)))
        else:
            stmt = stmt.where(c.id.in_(bindparam("w_ids", expanding=True)))
            if fence == "try":
                stmt = stmt.where(c.try_number == bindparam("w_try"))
        stmt = stmt.values(sets).returning(*_RETURNING)
        if not inline:
            with _ti_updates_lock:
                stmt = _ti_updates.setdefault(key, stmt)
    params = {f"v_{k}": v for k, v in plain.items()}
    if "state_name" in exprs:
        params["e_retrying"] = StateName.RETRYING.value
        params["e_running"] = StateName.RUNNING.value
    if "duration" in exprs:
        params["e_now"] = (now.replace(tzinfo=None).isoformat(sep=" ")
                           if conn.dialect.name == "sqlite" else now)
    return stmt, params


def _state_filter(conn: Connection) -> ColumnElement[Any]:
    """The state column in the compare-and-set's ``WHERE``, written so that no index on
    ``state`` can serve it (``+state`` on SQLite, ``state || ''`` on PostgreSQL): otherwise the
    planner may read the rows through that index (every task instance in that state, 100,000 in
    a big run; on PostgreSQL whenever the table's statistics are older than its states, which
    for a running big run they always are) and filter them by id, instead of looking up the few
    ids by their primary key: the cost of each change would grow with the run."""
    if conn.dialect.name == "sqlite":
        return literal_column(f"+{task_instance.name}.state", type_=String())
    return literal_column(f"({task_instance.name}.state || '')", type_=String())


def _seconds_between(conn: Connection, start: ColumnElement[Any]) -> Any:
    """Seconds from ``start`` to the bound parameter ``e_now``."""
    if conn.dialect.name == "sqlite":
        return (func.julianday(bindparam("e_now", type_=String())) - func.julianday(start)) \
            * 86400.0
    return func.extract("epoch", bindparam("e_now", type_=DateTime(timezone=True)) - start)


# -- DAG runs --------------------------------------------------------------------------------


_RUN_TERMINAL_VALUES = frozenset(s.value for s in RUN_TERMINAL)


def set_dag_run_state(
    conn: Connection,
    ids: int | Iterable[int],
    *,
    frm: DagRunState | Collection[DagRunState],
    to: DagRunState,
    actor: Who,
    now: datetime,
    name: StateName | None = None,
    message: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> TransitionResult:
    """Move DAG runs ``ids`` from ``frm`` to ``to`` (compare-and-set, history, timestamps)."""
    to = RUN(to)
    froms = [RUN(frm)] if isinstance(frm, str) else [RUN(f) for f in frm]
    for f in froms:
        dag_run_edge(f, to, actor)
    extra = dict(values or {})
    bad = _PROTECTED & extra.keys()
    if bad:
        raise ValueError(f"the door sets {sorted(bad)} itself")
    id_list = [ids] if isinstance(ids, int) else list(ids)
    result = TransitionResult()
    if not id_list:
        return result
    c = dag_run.c
    state_name = (name or default_run_name(to)).value
    sets: dict[str, Any] = {
        "state": to.value,
        "state_name": state_name,
        "state_message": message,
        "updated_at": now,
    }
    if to is RUN.QUEUED:
        sets.update(queued_at=now, start_date=None, end_date=None)
    elif to is RUN.RUNNING:
        sets["start_date"] = func.coalesce(c.start_date, now)
    elif to in RUN_TERMINAL:
        sets["end_date"] = now
    sets.update(extra)
    events: list[TransitionEvent] = []
    for f in froms:
        rows = conn.execute(
            update(dag_run)
            .where(c.state == f.value, c.id.in_(id_list))
            .values(**sets)
            .returning(c.id, c.dag_id, c.run_id)
        ).all()
        for row in rows:
            result.changed.append(row.id)
            events.append(
                TransitionEvent(ENTITY_RUN, row.id, row.dag_id, row.run_id, None, f.value,
                                to.value, state_name, None, actor.value, now)
            )
    _emit(conn, events, message)
    if to in RUN_TERMINAL and result.changed:
        deadlines.cancel_for_runs(conn, result.changed, now)
    # a run that ended and starts over (cleared) begins without what its tasks kept "for the run"
    task_state_repo.expire_run_retention(conn, [
        (e.dag_id, e.run_id) for e in events if e.frm in _RUN_TERMINAL_VALUES])
    missing = set(id_list) - set(result.changed)
    if missing:
        for row in conn.execute(select(c.id, c.state).where(c.id.in_(missing))).all():
            if row.state == to.value:
                result.already.append(row.id)
            else:
                result.lost[row.id] = row.state
        for pk in missing - set(result.already) - set(result.lost):
            result.lost[pk] = "missing"
    return result


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
    _emit(conn, events, message)
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
    _emit(conn, events, message)
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
