"""``hitl_detail`` rows: the request of a task awaiting input, and its one response.

The response is written once: a compare-and-set on ``responded_at IS NULL`` (and the try the
request belongs to), so of two people answering at once exactly one wins. The state change of
the task instance goes through the door in the same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from statewright.core.states import TI
from statewright.db.tables import dag_run, task_instance
from statewright.db.tables_hitl import hitl_detail

h = hitl_detail.c
ti = task_instance.c


def put_requests(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Record requests (one per task instance: a later try's request replaces the earlier)."""
    if not rows:
        return
    conn.execute(delete(hitl_detail).where(h.ti_id.in_([r["ti_id"] for r in rows])))
    conn.execute(insert(hitl_detail), [
        {"chosen_options": None, "params_input": None, "responded_by": None,
         "responded_at": None, "timed_out": False, "body": None, "defaults": None,
         "params": None, "respondents": None, "timeout_at": None, "multiple": False, **r}
        for r in rows])


def delete_requests(conn: Connection, ti_ids: Sequence[int]) -> None:
    if ti_ids:
        conn.execute(delete(hitl_detail).where(h.ti_id.in_(list(ti_ids))))


def _with_task_instance() -> Any:
    return (select(hitl_detail, ti.dag_id, ti.task_id, ti.map_index, ti.state,
                   ti.try_number.label("ti_try_number"), dag_run.c.run_id)
            .join(task_instance, ti.id == h.ti_id)
            .join(dag_run, dag_run.c.id == ti.dag_run_id))


def get(conn: Connection, ti_id: int) -> Any:
    """The request of one task instance with its key and state, or None."""
    return conn.execute(_with_task_instance().where(h.ti_id == ti_id)).first()


def listing(conn: Connection, *, dag_id: str | None = None, run_id: str | None = None,
            task_id: str | None = None, pending: bool | None = None,
            limit: int = 100, offset: int = 0) -> list[Any]:
    """Requests, newest first. ``pending=True``: only those still awaiting their response."""
    q = _filtered(_with_task_instance(), dag_id, run_id, task_id, pending)
    return list(conn.execute(q.order_by(h.created_at.desc(), h.ti_id.desc())
                             .limit(limit).offset(offset)).all())


def count(conn: Connection, *, dag_id: str | None = None, run_id: str | None = None,
          task_id: str | None = None, pending: bool | None = None) -> int:
    """How many requests ``listing`` would give without its page limits."""
    q = _filtered(select(func.count()).select_from(hitl_detail)
                  .join(task_instance, ti.id == h.ti_id)
                  .join(dag_run, dag_run.c.id == ti.dag_run_id), dag_id, run_id, task_id, pending)
    return int(conn.execute(q).scalar_one())


def _filtered(q: Any, dag_id: str | None, run_id: str | None, task_id: str | None,
              pending: bool | None) -> Any:
    if dag_id is not None:
        q = q.where(ti.dag_id == dag_id)
    if run_id is not None:
        q = q.where(dag_run.c.run_id == run_id)
    if task_id is not None:
        q = q.where(ti.task_id == task_id)
    if pending is True:
        q = q.where(h.responded_at.is_(None), ti.state == TI.AWAITING_INPUT.value)
    elif pending is False:
        q = q.where(h.responded_at.is_not(None))
    return q


def record_response(conn: Connection, ti_id: int, try_number: int, *, chosen_options: list[str],
                    params_input: dict[str, Any], responded_by: str | None, now: datetime,
                    timed_out: bool = False) -> bool:
    """Write the response if none is written yet for this try. False: someone was first."""
    res = conn.execute(
        update(hitl_detail)
        .where(h.ti_id == ti_id, h.try_number == try_number, h.responded_at.is_(None))
        .values(chosen_options=list(chosen_options), params_input=dict(params_input),
                responded_by=responded_by, responded_at=now, timed_out=timed_out))
    return bool(res.rowcount)


def due_timeouts(conn: Connection, now: datetime, limit: int = 500) -> list[Any]:
    """Unanswered requests whose response timeout has passed, of task instances still awaiting
    input (read from the ``(responded_at, timeout_at)`` index, never a scan of all rows)."""
    return list(conn.execute(
        select(hitl_detail, ti.dag_id, ti.task_id, ti.map_index)
        .join(task_instance, ti.id == h.ti_id).where(*_timed_out(now))
        .order_by(h.timeout_at).limit(limit)).all())


def due_timeouts_query(now: datetime) -> Any:
    """The requests of ``due_timeouts`` (a query for an ``EXISTS``)."""
    return select(h.ti_id).join(task_instance, ti.id == h.ti_id).where(*_timed_out(now))


def _timed_out(now: datetime) -> tuple[Any, ...]:
    return (h.responded_at.is_(None), h.timeout_at.is_not(None), h.timeout_at <= now,
            ti.state == TI.AWAITING_INPUT.value, ti.try_number == h.try_number)


def set_waiting_fields(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Before a running try moves to awaiting_input: its continuation (``next_method``,
    ``next_kwargs``), only while that try still runs (the state changes through the door)."""
    if not rows:
        return
    conn.execute(
        update(task_instance)
        .where(ti.id == bindparam("b_id"), ti.try_number == bindparam("b_try"),
               ti.state == TI.RUNNING.value)
        .values(next_method=bindparam("b_method"), next_kwargs=bindparam("b_kwargs")),
        [{"b_id": r["id"], "b_try": r["try_number"], "b_method": r["next_method"],
          "b_kwargs": r["next_kwargs"]} for r in rows])


def mark_timed_out(conn: Connection, ti_id: int, try_number: int, now: datetime) -> bool:
    """An unanswered request whose timeout passed with no defaults: closed, answered by no one
    (compare-and-set as ``record_response``)."""
    res = conn.execute(
        update(hitl_detail)
        .where(h.ti_id == ti_id, h.try_number == try_number, h.responded_at.is_(None))
        .values(responded_at=now, timed_out=True))
    return bool(res.rowcount)


def next_kwargs_of(conn: Connection, ti_ids: Sequence[int]) -> dict[int, Any]:
    """The continuation kwargs stored on task instances."""
    if not ti_ids:
        return {}
    return {r.id: r.next_kwargs for r in conn.execute(
        select(ti.id, ti.next_kwargs).where(ti.id.in_(list(ti_ids)))).all()}


def set_resume_kwargs(conn: Connection, rows: Sequence[tuple[int, int, Any]]) -> None:
    """Before awaiting_input → scheduled: each ``(ti_id, try_number, next_kwargs)`` with the
    response as its ``event`` (only while that try awaits input)."""
    if not rows:
        return
    conn.execute(
        update(task_instance)
        .where(ti.id == bindparam("b_id"), ti.try_number == bindparam("b_try"),
               ti.state == TI.AWAITING_INPUT.value)
        .values(next_kwargs=bindparam("b_kwargs")),
        [{"b_id": pk, "b_try": t, "b_kwargs": kw} for pk, t, kw in rows])
