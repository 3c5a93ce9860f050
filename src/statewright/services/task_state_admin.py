"""Task state and asset state changed by a person (the API), not by a task: set a key, change
its value, delete a key or all of them. Keys and values are checked as a task's are
(``core.task_state``); a value a person sets on a task instance belongs to its latest try, so
that try and the people reading it see it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from statewright.core.errors import StatewrightError
from statewright.core.task_state import Retention, encode_value, validate_key
from statewright.db.engine import transaction
from statewright.db.repositories import task_state as repo

__all__ = ["UnknownKey", "UnknownTaskInstance", "clear_asset", "clear_task",
           "delete_asset_value", "delete_task_value", "set_asset_value", "set_task_value"]


class UnknownTaskInstance(StatewrightError):
    """No such task instance."""


class UnknownKey(StatewrightError):
    """The task instance has no such key."""


def _try_of(conn: Any, ti: repo.TaskKey) -> int:
    try_number, _state, ti_id = repo.running_try(conn, ti)
    if ti_id is None:
        raise UnknownTaskInstance(
            f"No task instance {ti.task_id!r} (map index {ti.map_index}) in run {ti.run_id!r} "
            f"of DAG {ti.dag_id!r}.")
    return int(try_number or 0)


def set_task_value(engine: Engine, ti: repo.TaskKey, key: str, value: Any, *,
                   retention: Retention | None, now: datetime) -> None:
    """Store ``value`` under ``key`` (``retention`` None: change the value of an existing key,
    keeping its retention)."""
    text = encode_value(validate_key(key), value)
    with transaction(engine) as conn:
        writer_try = _try_of(conn, ti)
        current = repo.read(conn, ti, key, reader_try=None)
        if current is None and retention is None:
            raise UnknownKey(f"Task state key {key!r} was not found for task instance "
                             f"{ti.task_id!r} (map index {ti.map_index}).")
        kept = retention or Retention(current.retention if current and current.retention
                                      else Retention.RUN)
        repo.write(conn, ti, key, text, retention=kept, writer_try=writer_try, now=now)


def delete_task_value(engine: Engine, ti: repo.TaskKey, key: str, *, now: datetime) -> None:
    """Delete ``key`` (nothing when the task instance has no such key)."""
    with transaction(engine) as conn:
        repo.write(conn, ti, key, None, retention=Retention.RUN, writer_try=_try_of(conn, ti),
                   now=now)


def clear_task(engine: Engine, ti: repo.TaskKey, *, all_map_indices: bool) -> int:
    """Delete every key of the task instance (of every map index of the task)."""
    with transaction(engine) as conn:
        if all_map_indices:
            return repo.clear(conn, ti.dag_id, ti.run_id, [ti.task_id])
        _try_of(conn, ti)
        return repo.clear(conn, ti.dag_id, ti.run_id, map_indexes=[(ti.task_id, ti.map_index)])


def set_asset_value(engine: Engine, asset_name: str, key: str, value: Any, *, now: datetime
                    ) -> None:
    text = encode_value(validate_key(key), value)
    with transaction(engine) as conn:
        repo.asset_write(conn, asset_name, key, text, writer=None, writer_try=None, now=now)


def delete_asset_value(engine: Engine, asset_name: str, key: str, *, now: datetime) -> None:
    with transaction(engine) as conn:
        repo.asset_write(conn, asset_name, key, None, writer=None, writer_try=None, now=now)


def clear_asset(engine: Engine, asset_name: str, *, now: datetime) -> int:
    """Delete every key of the asset's state."""
    with transaction(engine) as conn:
        keys = [r.key for r in repo.asset_keys(conn, asset_name)]
        for key in keys:
            repo.asset_write(conn, asset_name, key, None, writer=None, writer_try=None, now=now)
    return len(keys)
