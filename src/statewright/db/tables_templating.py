"""Tables of templating: the fields each try rendered."""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Integer, String, Table

from statewright.db.tables import UTCDateTime, metadata

# One row per try of a task instance: its template fields as rendered (masked), keyed by the
# task instance's id and the try number.
rendered_task_instance_fields = Table(
    "rendered_task_instance_fields",
    metadata,
    Column("task_instance_id", Integer, ForeignKey("task_instance.id", ondelete="CASCADE"),
           primary_key=True),
    Column("try_number", Integer, primary_key=True),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("rendered_fields", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)
