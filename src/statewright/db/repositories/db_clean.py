"""Deleting old finished runs (``db clean``), and with them the DAG versions only they used."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, select, tuple_

from statewright.db.bulk import chunks
from statewright.db.repositories import dag_versions
from statewright.db.tables import dag_run, state_transition, task_instance_history


@dataclass(frozen=True)
class Cleaned:
    runs: int
    versions: int


def clean(conn: Connection, *, before: datetime, terminal_states: Collection[str],
          dag_ids: Collection[str] | None = None, dry_run: bool = False) -> Cleaned:
    """Delete the runs in ``terminal_states`` that were due before ``before`` (their task
    instances, tries, history rows and results go with them), then the versions no run or try
    points to any more (each DAG's latest version stays)."""
    r = dag_run.c
    stmt = select(r.id, r.dag_id, r.run_id).where(r.state.in_(sorted(terminal_states)),
                                                  r.run_after < before)
    if dag_ids:
        stmt = stmt.where(r.dag_id.in_(sorted(dag_ids)))
    runs = conn.execute(stmt).all()
    if dry_run:
        return Cleaned(len(runs), 0)
    delete_runs(conn, runs)
    versions = dag_versions.prune_unused(conn, dag_ids) if runs else 0
    return Cleaned(len(runs), versions)


def delete_runs(conn: Connection, runs: Sequence[Any]) -> None:
    """Delete the runs (rows with ``id``, ``dag_id``, ``run_id``) with their task instances,
    tries, history rows, results and notes."""
    for chunk in chunks(list(runs), 400):
        keys = [(x.dag_id, x.run_id) for x in chunk]
        h, t = task_instance_history.c, state_transition.c
        conn.execute(delete(task_instance_history).where(tuple_(h.dag_id, h.run_id).in_(keys)))
        conn.execute(delete(state_transition).where(tuple_(t.dag_id, t.run_id).in_(keys)))
        conn.execute(delete(dag_run).where(dag_run.c.id.in_([x.id for x in chunk])))
