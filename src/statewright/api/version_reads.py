"""Reads of DAG versions: the versions of a DAG, one version's structure and source code, and
the version marks of the grid."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from statewright.api.errors import NotFound
from statewright.api.schemas_versions import (
    DagSource,
    DagVersion,
    DagVersionCollection,
    DagVersionDetail,
)
from statewright.db.repositories import dag_versions
from statewright.db.repositories import dags as dag_repo


def _known_dag(conn: Connection, dag_id: str) -> None:
    if dag_repo.get_dag(conn, dag_id) is None:
        raise NotFound(f"No DAG with id {dag_id!r}. GET /api/v1/dags lists the known DAGs.")


def _version(row: Any) -> DagVersion:
    return DagVersion(id=row.id, dag_id=row.dag_id, version_number=row.version_number,
                      version_name=f"v{row.version_number}", structure_hash=row.structure_hash,
                      code_hash=row.code_hash, fileloc=row.fileloc, created_at=row.created_at)


def list_versions(conn: Connection, dag_id: str) -> DagVersionCollection:
    _known_dag(conn, dag_id)
    rows = dag_versions.list_versions(conn, dag_id)
    return DagVersionCollection(dag_versions=[_version(r) for r in rows],
                                total_entries=len(rows))


def _row(conn: Connection, dag_id: str, number: int | None) -> Any:
    _known_dag(conn, dag_id)
    row = dag_versions.get_version(conn, dag_id, number)
    if row is None:
        which = "no version yet" if number is None else f"no version {number}"
        raise NotFound(f"DAG {dag_id!r} has {which}. GET /api/v1/dags/{dag_id}/dagVersions "
                       "lists its versions.")
    return row


def get_version(conn: Connection, dag_id: str, number: int) -> DagVersionDetail:
    from statewright.api.reads import dag_structure

    row = _row(conn, dag_id, number)
    tasks, deps, groups = dag_structure(dict(row.serialized))
    return DagVersionDetail(**_version(row).model_dump(), tasks=tasks, dependencies=deps,
                            task_groups=groups)


def get_source(conn: Connection, dag_id: str, number: int | None) -> DagSource:
    row = _row(conn, dag_id, number)
    return DagSource(dag_id=dag_id, version_number=row.version_number,
                     fileloc=row.fileloc, content=row.source_code)


def grid_versions(conn: Connection, runs: Sequence[Any], rows: Mapping[str, dict[str, Any]],
                  cells_versions: Mapping[str, int]) -> dict[int, int]:
    """Version id → number for the runs shown; each row of a task no longer in the DAG gets
    the newest version its shown task instances ran."""
    numbers = dag_versions.numbers(
        conn, [r.dag_version_id for r in runs] + list(cells_versions.values()))
    for task_id, grid_row in rows.items():
        if not grid_row["in_dag"] and task_id in cells_versions:
            grid_row["version_number"] = numbers.get(cells_versions[task_id])
    return numbers


def version_changes(runs: Sequence[Any], before: Any) -> list[bool]:
    """For each run (oldest first): does its version differ from the one of the run before it
    (``before``: the run before the first, or None)?"""
    out: list[bool] = []
    previous = None if before is None else before.dag_version_id
    for r in runs:
        out.append(None not in (previous, r.dag_version_id) and previous != r.dag_version_id)
        previous = r.dag_version_id if r.dag_version_id is not None else previous
    return out
