"""What an XCom backend keeps outside the database goes when its rows are deleted (a task
cleared, a retry starting): the backend's ``purge`` is called for each row first, as Airflow
does. Nothing is read when the configured backend keeps nothing outside (``BaseXCom``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sqlalchemy import Connection

from statewright.db.repositories import xcoms as xcom_repo
from statewright.sdk.xcom_backend import BaseXCom, XComResult, resolve_xcom_backend

log = logging.getLogger(__name__)


def purge_values(conn: Connection, triples: Iterable[tuple[int, str, int]]) -> int:
    """Call the backend's ``purge`` for every value of these (dag_run_id, task_id, map_index)
    about to be deleted; returns how many rows it was called for. A purge that fails is
    logged, never raised: the rows are deleted all the same."""
    triples = list(triples)
    if not triples:
        return 0
    try:
        backend = resolve_xcom_backend()
    except Exception as exc:
        log.warning("XCom values not purged: the XCom backend cannot be loaded: %s", exc)
        return 0
    if getattr(backend.purge, "__func__", None) is vars(BaseXCom)["purge"].__func__:
        return 0  # the default keeps nothing outside the database
    rows = xcom_repo.values_of(conn, triples)
    for row in rows:
        try:
            backend.purge(XComResult(row.key, row.value, task_id=row.task_id,
                                     map_index=row.map_index))
        except Exception as exc:
            log.warning("the XCom %r of task %s could not be purged: %s", row.key,
                        row.task_id, exc)
    return len(rows)
