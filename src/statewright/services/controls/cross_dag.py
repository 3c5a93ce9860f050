"""Clearing across DAGs: a cleared ``ExternalTaskMarker`` clears its external task (and what
follows it) in the external DAG's run of the same logical date, recursively up to the marker's
``recursion_depth``; and a whole run cleared again for ``TriggerDagRunOperator(reset_dag_run)``.
Everything happens in the caller's transaction."""

from __future__ import annotations

import logging
import re
from datetime import datetime

from sqlalchemy import Connection, select

from statewright.core.transitions import Actor
from statewright.db.tables import dag_run
from statewright.services.controls.common import Plan, RunContext, apply_plan, load_context

log = logging.getLogger("statewright.controls")
MARKER = "ExternalTaskMarker"


def clear_whole_run(conn: Connection, dag_id: str, run_id: str, *, actor: Actor,
                    now: datetime) -> Plan:
    """Clear every task instance of the run (it runs again)."""
    from statewright.services.controls.clear import ClearOptions, after_clear, plan_clear

    ctx = load_context(conn, run_id, dag_id)
    plan = plan_clear(ctx, ClearOptions())
    if not plan.empty:
        apply_plan(conn, plan, actor=actor, now=now)
        after_clear(conn, plan, ctx)
    return plan


def clear_external_markers(conn: Connection, plan: Plan, ctx: RunContext, *, actor: Actor,
                           now: datetime, depth: int | None = None) -> list[Plan]:
    """Follow the cleared markers of ``plan`` into the DAGs they point to."""
    from statewright.services.controls.clear import ClearOptions, after_clear, plan_clear

    if ctx.view is None or ctx.run.logical_date is None:
        return []
    done: list[Plan] = []
    cleared = {c.task_id for c in plan.changes}
    for task_id in sorted(cleared):
        task = ctx.view.tasks.get(task_id)
        if task is None or task.operator != MARKER:
            continue
        left = task.raw.get("recursion_depth", 10) if depth is None else depth
        if left <= 0:
            raise_depth(task_id)
        target = _run_at(conn, str(task.raw["external_dag_id"]), ctx.run.logical_date)
        if target is None:
            log.info("marker %s: DAG %s has no run at %s; nothing to clear", task_id,
                     task.raw["external_dag_id"], ctx.run.logical_date)
            continue
        other = load_context(conn, target, str(task.raw["external_dag_id"]))
        options = ClearOptions((f"^{re.escape(str(task.raw['external_task_id']))}$",),
                               downstream=True)
        sub = plan_clear(other, options)
        if sub.empty:
            continue
        apply_plan(conn, sub, actor=actor, now=now)
        after_clear(conn, sub, other, follow_markers=False)
        done.append(sub)
        done += clear_external_markers(conn, sub, other, actor=actor, now=now, depth=left - 1)
    return done


def raise_depth(task_id: str) -> None:
    from statewright.services.controls.common import ControlError

    raise ControlError(f"Maximum recursion depth reached while following ExternalTaskMarker "
                       f"{task_id!r}; raise its recursion_depth or check for a loop between "
                       "DAGs. Nothing was cleared.")


def _run_at(conn: Connection, dag_id: str, logical_date: datetime) -> str | None:
    row = conn.execute(select(dag_run.c.run_id).where(
        dag_run.c.dag_id == dag_id, dag_run.c.logical_date == logical_date)
        .order_by(dag_run.c.id.desc())).first()
    return None if row is None else str(row.run_id)
