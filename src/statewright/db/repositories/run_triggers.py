"""Which run a ``TriggerDagRunOperator`` created from which run: the chain of triggering runs."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select

from statewright.db.tables import dag_run
from statewright.db.tables_assets import dag_run_trigger


def record(conn: Connection, run_pk: int, parent_pk: int) -> None:
    conn.execute(insert(dag_run_trigger).values(dag_run_id=run_pk, parent_run_id=parent_pk))


def lineage(conn: Connection, run_pk: int, limit: int = 100) -> list[str]:
    """The DAG ids of ``run_pk``'s run and of the runs that triggered it, nearest first."""
    out: list[str] = []
    current: int | None = run_pk
    while current is not None and len(out) < limit:
        row = conn.execute(
            select(dag_run.c.dag_id, dag_run_trigger.c.parent_run_id)
            .select_from(dag_run)
            .outerjoin(dag_run_trigger, dag_run_trigger.c.dag_run_id == dag_run.c.id)
            .where(dag_run.c.id == current)).first()
        if row is None:
            break
        out.append(str(row.dag_id))
        current = row.parent_run_id
    return out
