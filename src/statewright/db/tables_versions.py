"""Tables of DAG versions: one row per structural or code change of a DAG."""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Table, Text

from statewright.db.tables import UTCDateTime, metadata

# A DAG's versions, numbered from 1. Runs (``dag_run.dag_version_id``) and tries
# (``task_instance.dag_version_id``, ``task_instance_history.dag_version_id``) point here.
dag_version = Table(
    "dag_version",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), ForeignKey("dag.dag_id", ondelete="CASCADE"), nullable=False),
    Column("version_number", Integer, nullable=False),
    Column("structure_hash", String(64), nullable=False),  # of the serialized DAG
    Column("code_hash", String(64), nullable=False),  # of the DAG file's source code
    Column("serialized", JSON, nullable=False),
    Column("source_code", Text, nullable=False),
    Column("fileloc", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index(None, "dag_id", "version_number", unique=True),
)
