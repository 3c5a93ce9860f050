"""Which scheduler evaluates a running run: the one that locks its row first.

On PostgreSQL several schedulers share the running runs. Without a claim each evaluates every
run that needs work: both weigh the same task instances, both try the same compare-and-sets
(the second waits on the first's row locks, then loses them all), and two schedulers cost more
than twice one. So an evaluation takes the rows of the runs it means to evaluate with
``FOR UPDATE SKIP LOCKED`` (as Airflow's scheduler examines its DAG runs) and evaluates only
those it got; a run another scheduler is evaluating is left to it for this pass, and the next
pass of whichever scheduler is free takes it. The lock lasts until the evaluation's
transaction ends. Only running runs are returned (one that ended meanwhile is not evaluated).
The lock is ``FOR NO KEY UPDATE``: it does not stop rows that refer to the run (task
instances, XComs) from being written meanwhile, as a plain ``FOR UPDATE`` would.

SQLite has one writer at a time and one scheduler per file: every running run asked for is
returned, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from sqlalchemy import Connection, bindparam, select

from statewright.core.states import RUN
from statewright.db.repositories.dags import hash_column
from statewright.db.tables import dag_run


def claim_for_evaluation(conn: Connection, run_pks: Iterable[int]) -> set[int]:
    """The runs of ``run_pks`` that are running and that no other transaction holds, locked
    for this transaction (PostgreSQL); on SQLite, those that are running."""
    return set(claim_with_hashes(conn, run_pks))


def claim_with_hashes(conn: Connection, run_pks: Iterable[int]) -> dict[int, str | None]:
    """``claim_for_evaluation``, with the current hash of each claimed run's DAG (None: the
    DAG is gone) read in the same statement: the evaluation needs both, in one round trip."""
    pks = sorted(set(run_pks))
    if not pks:
        return {}
    stmt = _claim(conn.dialect.name)
    return {r.id: r.dag_hash for r in conn.execute(stmt, {"pks": pks})}


@cache
def _claim(dialect: str) -> Any:
    """The claim's statement, built once (each pass of every scheduler runs it). On PostgreSQL
    only the run rows are locked (``OF dag_run``), not the DAG row the hash comes from."""
    stmt = (select(dag_run.c.id, hash_column(dialect, dag_run.c.dag_id).label("dag_hash"))
            .where(dag_run.c.id.in_(bindparam("pks", expanding=True)),
                   dag_run.c.state == RUN.RUNNING.value)
            .order_by(dag_run.c.id))
    if dialect == "postgresql":
        return stmt.with_for_update(skip_locked=True, key_share=True, of=dag_run)
    return stmt
