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
- when a DAG's task set changes, its unfinished runs are reconciled (``integrity``);
- a DAG whose structure or file source changed gets a new version (``versions``); a DAG that
  cannot be serialized keeps its previous version.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import serialize_timetable
from statewright.db.repositories import audit, dag_files, import_errors
from statewright.db.repositories import dags as dag_repo
from statewright.services.dag_processor.asset_refs import schedule_summary, sync_dag_assets
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.integrity import reconcile_runs
from statewright.services.dag_processor.versions import write_versions
from statewright.services.dag_runs import run_size_error
from statewright.services.dag_view import DagView
from statewright.services.scheduler.dag_schedule import (
    ScheduleCache,
    ScheduleSpec,
    next_fields,
    schedule_spec,
)
from statewright.services.scheduler.dagrun_creation import refresh_next_dagrun

_SCHEDULE_KEYS = ("schedule", "timezone", "start_date", "end_date", "catchup")


@dataclass
class FileResult:
    dags: int = 0
    changed: int = 0
    deactivated: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class FileInput:
    path: str
    outcome: ImportOutcome
    mtime: float
    size: int
    content_hash: str | None


class FileSync:
    """Syncs files inside the caller's transaction, a batch at a time, in the order given."""

    def __init__(self, conn: Connection, *, now: datetime, folder_prefix: str,
                 present_files: Collection[str], paused_at_creation: bool) -> None:
        self.conn = conn
        self.now = now
        self.folder_prefix = folder_prefix
        self.present_files = present_files
        self.paused_at_creation = paused_at_creation
        self._defines: dict[str, set[str]] = {}  # what each file synced here defines now
        self._claimed: dict[str, str] = {}  # dag_id → the file synced here that has it
        self._schedules = ScheduleCache()  # DAGs on the same schedule: computed once

    def file(self, path: str, outcome: ImportOutcome, *, mtime: float, size: int,
             content_hash: str | None) -> FileResult:
        return self.files([FileInput(path, outcome, mtime, size, content_hash)])[path]

    def files(self, items: Sequence[FileInput]) -> dict[str, FileResult]:
        conn, now = self.conn, self.now
        paths = [i.path for i in items]
        previous = dag_files.get_many(conn, paths)
        states = dag_repo.sync_states(
            conn, [d["dag_id"] for i in items if i.outcome.error is None for d in i.outcome.dags])
        active = dag_repo.active_in_files(conn, paths)
        batch = _Batch()
        results: dict[str, FileResult] = {}
        for item in items:
            row = previous.get(item.path)
            previous_ids = set(row.dag_ids) if row is not None else set()
            results[item.path] = self._file(item, previous_ids, active.get(item.path, set()),
                                            states, batch)
        dag_repo.insert_synced_many(conn, batch.inserts)
        audit.record_many(conn, [_paused_at_creation(r, now) for r in batch.inserts
                                 if r["paused"]])
        write_versions(conn, batch.synced, now)
        sync_dag_assets(conn, batch.changed, now)
        dag_repo.touch_parsed(conn, batch.unchanged, now)
        gone = dag_repo.deactivate(conn, batch.gone - set(self._claimed))
        for item in items:
            results[item.path].deactivated = sorted(
                set(results[item.path].deactivated) & set(gone))
        for path, text in batch.errors.items():
            import_errors.record(conn, path, text, now)
        import_errors.clear(conn, batch.clean)
        dag_files.save_many(conn, batch.files, now)
        return results

    def _file(self, item: FileInput, previous_ids: set[str], active: set[str],
              states: dict[str, Any], batch: _Batch) -> FileResult:
        path, outcome = item.path, item.outcome
        if outcome.error is not None:
            batch.errors[path] = outcome.error
            batch.file(item, sorted(previous_ids))
            self._defines[path] = previous_ids
            return FileResult(error=outcome.error)
        result = FileResult()
        errors: list[str] = []
        kept: set[str] = set()
        present: list[str] = []
        conflict = False
        mine = active | previous_ids
        for ser in ({**d, "fileloc": path} for d in outcome.dags):
            dag_id = ser["dag_id"]
            owner = self._owner(dag_id, path, states.get(dag_id))
            if owner is not None:
                errors.append(
                    f"DAG id {dag_id!r} is defined in two files: {owner} (which keeps it) and "
                    f"{path}. Each DAG needs its own dag_id: rename one of them.")
                conflict = True
                continue
            try:
                spec = schedule_spec(ser)
            except DagDefinitionError as exc:
                errors.append(f"DAG {dag_id!r} in {path}: {exc}")
                if dag_id in mine:
                    kept.add(dag_id)
                continue
            # Too big for a run: refused here, so no run of any kind (scheduled, backfill,
            # asset-triggered, manual) is ever created of it; a version that fitted stays.
            too_big = run_size_error(dag_id, len(ser.get("tasks") or ()))
            if too_big is not None:
                errors.append(f"{too_big} It is not loaded from {path}.")
                if dag_id in mine:
                    kept.add(dag_id)
                continue
            present.append(dag_id)
            self._claimed[dag_id] = path
            result.dags += 1
            batch.synced.append(ser)
            if self._upsert(ser, spec, states.get(dag_id), batch):
                result.changed += 1
                batch.changed.append(ser)
            else:
                batch.unchanged.append(dag_id)
        for dag_id, message in outcome.dag_errors.items():
            errors.append(f"DAG {dag_id!r} in {path} cannot be serialized: {message}")
            if dag_id in mine:
                kept.add(dag_id)
        result.deactivated = sorted(active - set(present) - kept)
        batch.gone |= set(result.deactivated)
        if errors:
            result.error = batch.errors[path] = "\n\n".join(errors)
        else:
            batch.clean.append(path)
        self._defines[path] = {*present, *kept}
        batch.file(item, [*present, *kept], again=conflict)
        return result

    def _owner(self, dag_id: str, path: str, state: Any) -> str | None:
        """The other file that has ``dag_id`` and still defines it (None: ``path`` may have it)."""
        claimed = self._claimed.get(dag_id)
        if claimed is not None and claimed != path:
            return claimed
        if state is None or not state.is_active or state.fileloc in (None, path):
            return None
        other = state.fileloc
        if other not in self.present_files:
            return None
        if other in self._defines:
            return other if dag_id in self._defines[other] else None
        row = dag_files.get(self.conn, other)
        return other if row is None or dag_id in (row.dag_ids or []) else None

    def _upsert(self, ser: dict[str, Any], spec: ScheduleSpec, state: Any,
                batch: _Batch) -> bool:
        """Insert (batched) or update the DAG row; True when something changed."""
        conn, now = self.conn, self.now
        new_hash = dag_repo.dag_hash(ser)
        schedule = {"timetable": serialize_timetable(spec.timetable),
                    "schedule_summary": schedule_summary(ser, spec)}
        if state is None:
            paused = ser.get("is_paused_upon_creation")
            batch.inserts.append({
                "serialized": ser, "now": now,
                "paused": self.paused_at_creation if paused is None else bool(paused),
                "values": {**schedule,
                           **next_fields(self._schedules.next_info(spec, None, now))}})
            return True
        if state.dag_hash == new_hash and state.is_active:
            return False
        old = dag_repo.get_serialized(conn, ser["dag_id"]) or {}
        values: dict[str, Any] = dict(schedule)
        if (not state.is_active or state.timetable != schedule["timetable"]
                or any(old.get(k) != ser.get(k) for k in _SCHEDULE_KEYS)):
            values.update(refresh_next_dagrun(conn, [ser["dag_id"]], {ser["dag_id"]: spec},
                                              now)[ser["dag_id"]])
        dag_repo.update_synced(conn, ser, now=now, values=values)
        if _task_ids(old) != _task_ids(ser):
            reconcile_runs(conn, DagView(ser, new_hash), now=now)
        return True


PAUSED_AT_CREATION = "paused_at_creation"
"""The audit log action of a new DAG the DAG processor created paused."""
DAG_PROCESSOR = "dag_processor"


def _paused_at_creation(insert: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The audit row of a DAG created paused, naming why (its own flag or the setting)."""
    dag_id = insert["serialized"]["dag_id"]
    why = ("its is_paused_upon_creation=True"
           if insert["serialized"].get("is_paused_upon_creation") else
           "[core] dags_are_paused_at_creation (STATEWRIGHT_DAGS_ARE_PAUSED_AT_CREATION)")
    return {"at": now, "username": DAG_PROCESSOR, "action": PAUSED_AT_CREATION, "method": "",
            "path": "", "outcome": "success", "status_code": 0, "dag_id": dag_id,
            "target": dag_id, "detail": f"new DAG paused at creation per {why}; "
                                        "unpause it to let it run"}


@dataclass
class _Batch:
    """What a batch of files writes once it has been decided."""

    inserts: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)  # serialized, for their assets
    unchanged: list[str] = field(default_factory=list)
    synced: list[dict[str, Any]] = field(default_factory=list)  # every DAG synced, serialized
    gone: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    clean: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)

    def file(self, item: FileInput, dag_ids: Sequence[str], *, again: bool = False) -> None:
        """Remember the file; ``again``: import it on the next pass whatever its content."""
        self.files.append({
            "fileloc": item.path, "mtime": item.mtime, "size": item.size,
            "content_hash": None if again else item.content_hash,
            "dag_ids": list(dag_ids), "duration": item.outcome.duration})


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
