"""Notes on DAG runs and task instances, with their history (who wrote which note when)."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, String, Table, Text

from statewright.db.tables import UTCDateTime, metadata

note = Table(
    "note",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(250), nullable=True),  # NULL: the run's note
    Column("map_index", Integer, nullable=True),
    Column("content", Text, nullable=True),  # NULL: the note was cleared
    Column("username", String(100), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_note_dag_run_id_task_id_map_index", "dag_run_id", "task_id", "map_index"),
)
"""One row per note written; the newest row of a run or task instance is its note."""
