"""Tables of durable state: a task instance's keys (``task_state``) and an asset's keys
(``asset_state``), one row per key, the value as JSON text."""

from __future__ import annotations

from sqlalchemy import Column, Integer, String, Table, Text, UniqueConstraint

from statewright.db.tables import UTCDateTime, metadata

task_state = Table(
    "task_state",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("map_index", Integer, nullable=False, default=-1),
    Column("key", String(250), nullable=False),
    Column("value", Text, nullable=False),  # JSON text
    Column("retention", String(20), nullable=False),  # try | run | never_expire
    Column("try_number", Integer, nullable=False),  # the try that wrote it
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("dag_id", "run_id", "task_id", "map_index", "key",
                     name="uq_task_state_key"),
)

asset_state = Table(
    "asset_state",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("asset_name", String(1500), nullable=False),
    Column("key", String(250), nullable=False),
    Column("value", Text, nullable=False),  # JSON text
    # who wrote it last
    Column("dag_id", String(250), nullable=True),
    Column("run_id", String(250), nullable=True),
    Column("task_id", String(250), nullable=True),
    Column("try_number", Integer, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("asset_name", "key", name="uq_asset_state_key"),
)
