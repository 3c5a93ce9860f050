"""Writing what importing a DAG file gave: DAG rows, next runs, import errors, file state.

Rules (Airflow's, where it has one):

- a file that fails to import gets an import error (the traceback); its DAGs stay as they were;
- a DAG whose schedule is invalid (cron, time zone, end before start, a periodic schedule
  without ``start_date``) is not synced: the file gets an import error naming the file, the
  DAG and the value, and the file's other DAGs are synced;
- a DAG id that an active DAG of another, still present, file defines is an import error on
  the second file naming both files; the first keeps the DAG. The second file is imported
  again on every pass until the conflict is gone;
- a DAG that its file no longer defines, or whose file is gone, becomes inactive;
- a new DAG starts paused when its ``is_paused_upon_creation`` says so, else per the
  ``dags_are_paused_at_creation`` setting;
- ``timetable``, ``schedule_summary`` and the ``next_dagrun*`` columns are written when a DAG
  is created, when its schedule changes and when it becomes active again;
- when a DAG's task set changes, its unfinished runs are reconciled (``integrity``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.errors import DagDefinitionError
from statewright.db.repositories import dag_files, import_errors
from statewright.db.repositories import dags as dag_repo
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.integrity import reconcile_runs
from statewright.services.dag_view import DagView
from statewright.services.scheduler.dag_schedule import ScheduleSpec, next_fields, schedule_spec
from statewright.services.scheduler.dagrun_creation import refresh_next_dagrun

_SCHEDULE_KEYS = ("schedule", "timezone", "start_date", "end_date", "catchup")


@dataclass
class FileResult:
    dags: int = 0
    changed: int = 0
    deactivated: list[str] = field(default_factory=list)
    error: str | None = None


class FileSync:
    """Syncs files one after the other inside the caller's transaction."""

    def __init__(self, conn: Connection, *, now: datetime, folder_prefix: str,
                 present_files: Collection[str], paused_at_creation: bool) -> None:
        self.conn = conn
        self.now = now
        self.folder_prefix = folder_prefix
        self.present_files = present_files
        self.paused_at_creation = paused_at_creation

    def file(self, path: str, outcome: ImportOutcome, *, mtime: float, size: int,
             content_hash: str | None) -> FileResult:
        conn, now = self.conn, self.now
        previous = dag_files.get(conn, path)
        previous_ids = set(previous.dag_ids) if previous is not None else set()
        if outcome.error is not None:
            import_errors.record(conn, path, outcome.error, now)
            dag_files.save(conn, path, mtime=mtime, size=size, content_hash=content_hash,
                           dag_ids=sorted(previous_ids), now=now, duration=outcome.duration)
            return FileResult(error=outcome.error)

        result = FileResult()
        errors: list[str] = []
        kept: set[str] = set()
        present: list[str] = []
        unchanged: list[str] = []
        conflict = False
        serialized = [{**d, "fileloc": path} for d in outcome.dags]
        states = dag_repo.sync_states(conn, [s["dag_id"] for s in serialized])
        mine = dag_repo.active_in_file(conn, path) | previous_ids
        for ser in serialized:
            dag_id = ser["dag_id"]
            state = states.get(dag_id)
            if state is not None and state.is_active and state.fileloc != path \
                    and self._still_defines(state.fileloc, dag_id):
                errors.append(
                    f"DAG id {dag_id!r} is defined in two files: {state.fileloc} (which keeps "
                    f"it) and {path}. Each DAG needs its own dag_id: rename one of them.")
                conflict = True
                continue
            try:
                spec = schedule_spec(ser)
            except DagDefinitionError as exc:
                errors.append(f"DAG {dag_id!r} in {path}: {exc}")
                if dag_id in mine:
                    kept.add(dag_id)
                continue
            present.append(dag_id)
            result.dags += 1
            if self._upsert(ser, spec, state):
                result.changed += 1
            else:
                unchanged.append(dag_id)
        for dag_id, message in outcome.dag_errors.items():
            errors.append(f"DAG {dag_id!r} in {path} cannot be serialized: {message}")
            if dag_id in mine:
                kept.add(dag_id)
        dag_repo.touch_parsed(conn, unchanged, now)

        gone = dag_repo.active_in_file(conn, path) - set(present) - kept
        result.deactivated = dag_repo.deactivate(conn, gone)
        if errors:
            result.error = "\n\n".join(errors)
            import_errors.record(conn, path, result.error, now)
        else:
            import_errors.clear(conn, [path])
        dag_files.save(conn, path, mtime=mtime, size=size,
                       content_hash=None if conflict else content_hash,
                       dag_ids=[*present, *kept], now=now, duration=outcome.duration)
        return result

    def _still_defines(self, other: str | None, dag_id: str) -> bool:
        """Whether ``other`` (the file that has the DAG now) still exists and defines it."""
        if other is None or other not in self.present_files:
            return False
        row = dag_files.get(self.conn, other)
        return row is None or dag_id in (row.dag_ids or [])

    def _upsert(self, ser: dict[str, Any], spec: ScheduleSpec, state: Any) -> bool:
        """Insert or update the DAG row; True when something changed."""
        conn, now = self.conn, self.now
        new_hash = dag_repo.dag_hash(ser)
        schedule = {"timetable": spec.timetable.serialize(),
                    "schedule_summary": spec.timetable.summary}
        if state is None:
            paused = ser.get("is_paused_upon_creation")
            dag_repo.insert_synced(
                conn, ser, now=now,
                paused=self.paused_at_creation if paused is None else bool(paused),
                values={**schedule, **next_fields(spec.next_info(None, now))})
            return True
        if state.dag_hash == new_hash and state.is_active:
            return False
        old = dag_repo.get_serialized(conn, ser["dag_id"]) or {}
        values = dict(schedule)
        if (not state.is_active or state.timetable != schedule["timetable"]
                or any(old.get(k) != ser.get(k) for k in _SCHEDULE_KEYS)):
            values.update(refresh_next_dagrun(conn, [ser["dag_id"]], {ser["dag_id"]: spec},
                                              now)[ser["dag_id"]])
        dag_repo.update_synced(conn, ser, now=now, values=values)
        if _task_ids(old) != _task_ids(ser):
            reconcile_runs(conn, DagView(ser, new_hash), now=now)
        return True


def _task_ids(serialized: Mapping[str, Any]) -> set[str]:
    return {t["task_id"] for t in serialized.get("tasks") or []}


def forget_removed_files(conn: Connection, removed: Collection[str]) -> list[str]:
    """Files that disappeared: their DAGs become inactive, their import errors go."""
    gone: set[str] = set()
    for path in removed:
        gone |= dag_repo.active_in_file(conn, path)
    import_errors.clear(conn, removed)
    dag_files.forget(conn, removed)
    return dag_repo.deactivate(conn, gone)
