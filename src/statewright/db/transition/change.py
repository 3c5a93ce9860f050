"""The door's state changes: compare-and-set on task instances and DAG runs, fenced by try."""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    DateTime,
    String,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    select,
    tuple_,
    type_coerce,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
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
from statewright.db.repositories import dag_versions, deadlines
from statewright.db.repositories import task_state as task_state_repo
from statewright.db.tables import dag_run, task_instance
from statewright.db.transition.events import (
    ENTITY_RUN,
    ENTITY_TI,
    PROTECTED,
    PerRow,
    TransitionEvent,
    TransitionResult,
    emit,
)

# Target states whose reaching ends a try (or the wait for one): end_date and duration are set.
_TI_ENDS = frozenset(
    {TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED, TI.UP_FOR_RETRY}
)

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
    bad = PROTECTED & extra.keys()
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
    emit(conn, events, message)

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
    per_row = tuple(sorted(k for k, v in extra.items() if isinstance(v, PerRow)))
    plain.update({k: v for k, v in extra.items() if k not in inline and k not in per_row})
    exprs = tuple(sorted(expr_set - extra.keys()))
    key = (conn.dialect.name, fence, increment_try, exprs, tuple(sorted(plain)), per_row)
    stmt = None if inline else _ti_updates.get(key)
    if stmt is None:
        c = task_instance.c
        sets: dict[str, Any] = {k: bindparam(f"v_{k}", type_=c[k].type) for k in plain}
        sets.update(_ti_exprs(conn, exprs, increment_try))
        sets.update({k: _per_row(conn, k) for k in per_row})
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
    for k in per_row:
        params[f"r_{k}"] = json.dumps({str(pk): v for pk, v in extra[k].values.items()})
    if "state_name" in exprs:
        params["e_retrying"] = StateName.RETRYING.value
        params["e_running"] = StateName.RUNNING.value
    if "duration" in exprs:
        params["e_now"] = (now.replace(tzinfo=None).isoformat(sep=" ")
                           if conn.dialect.name == "sqlite" else now)
    return stmt, params


def _per_row(conn: Connection, key: str) -> ColumnElement[Any]:
    """The value of column ``key`` for this row, looked up by its id in the JSON object bound
    as ``r_<key>`` (one statement text whatever the rows and their values)."""
    c = task_instance.c
    bound = bindparam(f"r_{key}", type_=String())
    if conn.dialect.name == "sqlite":
        path = literal('$."', String()) + cast(c.id, String()) + literal('"', String())
        return type_coerce(func.json_extract(bound, path), c[key].type)
    return cast(func.jsonb_extract_path_text(cast(bound, JSONB), cast(c.id, String())),
                c[key].type)


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
    bad = PROTECTED & extra.keys()
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
    emit(conn, events, message)
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
