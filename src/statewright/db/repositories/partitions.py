"""The partition keys of runs (``dag_run.partition_key`` / ``partition_date``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, tuple_, update

from statewright.db.bulk import chunks
from statewright.db.tables import dag_run

__all__ = [
    "drop_queued_events",
    "partitions_of_runs",
    "run_partition_keys",
    "runs_of_partitions",
    "set_run_partitions",
]


def set_run_partitions(conn: Connection,
                       partitions: Mapping[int, tuple[str, datetime | None]]) -> None:
    """Write the partition key (and date) of just-created runs (run key -> (key, date))."""
    if not partitions:
        return
    stmt = (update(dag_run).where(dag_run.c.id == bindparam("pk"))
            .values(partition_key=bindparam("key"), partition_date=bindparam("date")))
    conn.execute(stmt, [{"pk": pk, "key": key, "date": date}
                        for pk, (key, date) in partitions.items()])


def run_partition_keys(conn: Connection,
                       runs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(dag id, run id) -> the run's partition key, for the runs that have one."""
    out: dict[tuple[str, str], str] = {}
    for part in chunks(sorted(set(runs)), 400):
        rows = conn.execute(select(dag_run.c.dag_id, dag_run.c.run_id, dag_run.c.partition_key)
                            .where(tuple_(dag_run.c.dag_id, dag_run.c.run_id).in_(list(part)),
                                   dag_run.c.partition_key.is_not(None))).all()
        out.update({(str(d), str(r)): str(k) for d, r, k in rows})
    return out


def runs_of_partitions(conn: Connection, dag_id: str, keys: Iterable[str]) -> dict[str, Any]:
    """partition key -> the latest run of ``dag_id`` with that key."""
    out: dict[str, Any] = {}
    for part in chunks(sorted(set(keys)), 400):
        rows = conn.execute(select(dag_run).where(dag_run.c.dag_id == dag_id,
                                                  dag_run.c.partition_key.in_(list(part)))
                            .order_by(dag_run.c.id)).all()
        out.update({str(r.partition_key): r for r in rows})
    return out


def drop_queued_events(conn: Connection, dag_id: str, event_ids: Iterable[int]) -> int:
    """Forget queued events a partitioned consumer can never use (their key does not map)."""
    from statewright.db.tables_assets import asset_event_queue as q

    ids = sorted(set(event_ids))
    return sum(conn.execute(q.delete().where(q.c.target_dag_id == dag_id,
                                             q.c.asset_event_id.in_(list(part)))).rowcount
               for part in chunks(ids, 400))


def partitions_of_runs(conn: Connection,
                       run_pks: Iterable[int]) -> dict[int, tuple[str, datetime | None]]:
    """run key -> (partition key, partition date), for the runs that have a key."""
    out: dict[int, tuple[str, datetime | None]] = {}
    for part in chunks(sorted(set(run_pks)), 500):
        rows = conn.execute(select(dag_run.c.id, dag_run.c.partition_key,
                                   dag_run.c.partition_date)
                            .where(dag_run.c.id.in_(list(part)),
                                   dag_run.c.partition_key.is_not(None))).all()
        out.update({int(pk): (str(key), date) for pk, key, date in rows})
    return out
