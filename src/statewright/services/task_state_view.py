"""What the API, the UI and the CLI show of task state and asset state (read only)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from statewright.db.repositories import task_state as repo

__all__ = ["asset_state", "asset_states", "task_state"]


def task_state(conn: Connection, dag_id: str, run_id: str, task_id: str,
               map_index: int | None = None) -> list[dict[str, Any]]:
    """Every key a task keeps in a run (each map index unless ``map_index`` is given)."""
    return [{"map_index": r.map_index, "key": r.key, "value": r.value,
             "retention": r.retention, "try_number": r.try_number,
             "updated_at": r.updated_at}
            for r in repo.keys_of(conn, dag_id, run_id, task_id, map_index=map_index)]


def asset_state(conn: Connection, asset_name: str) -> list[dict[str, Any]]:
    """Every key of an asset's state, with the task that wrote it last."""
    return [{"key": r.key, "value": r.value, "written_by": r.written_by,
             "try_number": r.try_number, "updated_at": r.updated_at}
            for r in repo.asset_keys(conn, asset_name)]


def asset_states(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """Every asset that has state → its keys (the assets page)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in repo.asset_keys(conn, None):
        out.setdefault(r.asset_name or "", []).append(
            {"key": r.key, "value": r.value, "written_by": r.written_by,
             "try_number": r.try_number, "updated_at": r.updated_at})
    return out
