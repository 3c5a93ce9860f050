"""Writing DAG versions: a row when a DAG's structure or its file's source code changed.

Each synced DAG is compared with its latest version (one query per batch of files); only a
DAG that is new, or whose structure hash or code hash differs, gets a row. Runs and tries
point at versions by id (``dag_run.dag_version_id``, ``task_instance.dag_version_id``): a new
version costs one row, never a copy per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from statewright.core.versions import (
    VersionKey,
    code_hash,
    needs_new_version,
    next_version_number,
    structure_hash,
)
from statewright.db.repositories import dag_versions


def read_source(path: str | None) -> str:
    """A DAG file's source code ("" when it cannot be read any more)."""
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def write_versions(conn: Connection, synced: Sequence[Mapping[str, Any]], now: datetime) -> int:
    """Add a version for each serialized DAG in ``synced`` that changed; returns how many."""
    if not synced:
        return 0
    latest = dag_versions.latest_keys(conn, [s["dag_id"] for s in synced])
    sources: dict[str | None, str] = {}
    rows: list[dict[str, Any]] = []
    for ser in synced:
        path = ser.get("fileloc")
        if path not in sources:
            sources[path] = read_source(path)
        source = sources[path]
        key = VersionKey(structure_hash(ser), code_hash(source))
        number, known = latest.get(ser["dag_id"], (None, None))
        if not needs_new_version(known, key):
            continue
        rows.append({"dag_id": ser["dag_id"], "version_number": next_version_number(number),
                     "structure_hash": key.structure_hash, "code_hash": key.code_hash,
                     "serialized": dict(ser), "source_code": source, "fileloc": path,
                     "created_at": now})
    dag_versions.insert_many(conn, rows)
    return len(rows)
