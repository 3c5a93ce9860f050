"""``dag.test()`` and ``TriggerDagRunOperator``, as in Airflow 3.3.

Airflow 3.3's ``dag.test()`` writes the DAGs of its DAG bundle (the DAGs folder) to the
database before its run, so a ``TriggerDagRunOperator`` finds the DAG it names and creates a
run of it there, queued: ``dag.test()`` runs only its own DAG's run. A DAG found nowhere fails
the task (Airflow's execution API answers 404).

``dag.test()`` does the same for the DAGs its ``TriggerDagRunOperator``s name (when the name
is not a template) that its database lacks: it looks for them among the other DAGs of the
tested DAG's file, then in the files of the DAGs folder (``STATEWRIGHT_DAGS_FOLDER``), and
stores those it finds, paused or not as a new DAG of the DAG processor would be.
"""

from __future__ import annotations

import contextvars
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from statewright.config import load_settings
from statewright.db.repositories import dags as dag_repo

log = logging.getLogger("statewright.dag_test")
# Set while the files are loaded: a file that calls dag.test() as it is imported does not
# look for DAGs again (it would load itself without end).
_looking = contextvars.ContextVar("dag_test_looking_for_targets", default=False)


def trigger_targets(dag: Any) -> set[str]:
    """The DAG ids the DAG's ``TriggerDagRunOperator``s name (templated names left out)."""
    names = {getattr(t, "trigger_dag_id", None) for t in dag.tasks}
    return {n for n in names if isinstance(n, str) and n and "{{" not in n} - {dag.dag_id}


def store_trigger_targets(conn: Connection, dag: Any, *, now: datetime) -> list[str]:
    """Store the DAGs the tested DAG triggers that the database lacks; returns their ids."""
    missing = {d for d in trigger_targets(dag) if dag_repo.get_dag(conn, d) is None}
    if not missing or _looking.get():
        return []
    settings = load_settings()
    found: dict[str, Any] = {}
    token = _looking.set(True)
    try:
        for path in _candidate_files(dag, settings.dags_folder):
            for dag_id, other in _dags_of(path).items():
                if dag_id in missing and dag_id not in found:
                    found[dag_id] = other
            if len(found) == len(missing):
                break
    finally:
        _looking.reset(token)
    for dag_id, other in sorted(found.items()):
        dag_repo.upsert_dag(conn, other.serialize(), now=now,
                            paused_at_creation=settings.dags_are_paused_at_creation)
        log.info("dag.test: stored DAG %s (from %s), which %s triggers", dag_id,
                 other.fileloc, dag.dag_id)
    return sorted(found)


def _candidate_files(dag: Any, folder: Path) -> list[Path]:
    from statewright.sdk.loader import list_dag_files

    own = Path(dag.fileloc).resolve() if getattr(dag, "fileloc", None) else None
    files = [own] if own is not None and own.is_file() else []
    return files + [p.resolve() for p in list_dag_files(folder) if p.resolve() != own]


def _dags_of(path: Path) -> dict[str, Any]:
    from statewright.sdk.loader import load_dag_file

    loaded = load_dag_file(path)
    if loaded.error:
        log.debug("dag.test: %s does not load: %s", path, loaded.error)
    return dict(loaded.dags)
