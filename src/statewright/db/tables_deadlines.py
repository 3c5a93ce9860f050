"""Tables of deadline alerts: one row per alert of a run, indexed by when it is due."""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Table, Text

from statewright.db.tables import UTCDateTime, metadata

# Written with the run (one row per ``DeadlineAlert`` of its DAG); the scheduler reads the
# pending rows whose ``deadline_time`` passed from the (status, deadline_time) index.
deadline = Table(
    "deadline",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("alert_index", Integer, nullable=False),  # position in the DAG's deadline list
    Column("reference", String(100), nullable=False),  # e.g. DAGRUN_QUEUED_AT
    Column("deadline_time", UTCDateTime, nullable=False),
    Column("callback", JSON, nullable=False),  # {kind: sync|async, path, kwargs}
    Column("status", String(20), nullable=False),  # pending | missed | cancelled
    Column("created_at", UTCDateTime, nullable=False),
    Column("missed_at", UTCDateTime, nullable=True),
    Column("cancelled_at", UTCDateTime, nullable=True),
    Column("callback_id", Integer, nullable=True),  # the dag_callback row that runs it
    Column("message", Text, nullable=True),
    Index(None, "status", "deadline_time"),
)
