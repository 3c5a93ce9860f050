"""Tables of assets: assets, asset events, what each run consumed."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from statewright.db.tables import UTCDateTime, metadata

asset = Table(
    "asset",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(1500), nullable=False, unique=True),
    Column("uri", String(1500), nullable=False, index=True),
    Column("group", String(1500), nullable=False, default="asset"),
    Column("extra", JSON, nullable=True),
    Column("watchers", JSON, nullable=True),  # [{name, classpath, kwargs}] of the defining DAG
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

asset_alias = Table(
    "asset_alias",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(1500), nullable=False, unique=True),
    Column("group", String(1500), nullable=False, default="asset"),
)

# The assets an alias has resolved to (a try's ``outlet_events[alias].add(asset)``).
asset_alias_asset = Table(
    "asset_alias_asset",
    metadata,
    Column("alias_id", Integer, ForeignKey("asset_alias.id", ondelete="CASCADE"),
           primary_key=True),
    Column("asset_id", Integer, ForeignKey("asset.id", ondelete="CASCADE"), primary_key=True),
)

# Which DAG schedules on (kind "schedule"), updates ("outlet") or reads ("inlet") which asset or
# alias. Rewritten for a DAG each time it is synced.
dag_asset_reference = Table(
    "dag_asset_reference",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), nullable=False),
    Column("kind", String(20), nullable=False),
    Column("task_id", String(250), nullable=True),
    Column("asset_id", Integer, ForeignKey("asset.id", ondelete="CASCADE"), nullable=True),
    Column("alias_id", Integer, ForeignKey("asset_alias.id", ondelete="CASCADE"), nullable=True),
    Index(None, "dag_id", "kind"),
    Index(None, "asset_id", "kind"),
    Index(None, "alias_id", "kind"),
)

asset_event = Table(
    "asset_event",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("asset_id", Integer, ForeignKey("asset.id", ondelete="CASCADE"), nullable=False),
    Column("extra", JSON, nullable=True),
    Column("source_dag_id", String(250), nullable=True),
    Column("source_run_id", String(250), nullable=True),
    Column("source_task_id", String(250), nullable=True),
    Column("source_map_index", Integer, nullable=False, default=-1),
    Column("source_alias", String(1500), nullable=True),  # the alias it was emitted through
    Column("source", String(30), nullable=False),  # task | api | cli | watcher
    Column("timestamp", UTCDateTime, nullable=False),
    Column("partition_key", String(250), nullable=True),  # migration 0014
    Index(None, "asset_id", "id"),
    Index(None, "source_dag_id", "source_run_id"),
)

# Events not yet consumed by a consumer DAG: one row per (consumer DAG, event), written with
# the event; the scheduler that creates the run deletes exactly the rows it read.
asset_event_queue = Table(
    "asset_event_queue",
    metadata,
    Column("target_dag_id", String(250), primary_key=True),
    Column("asset_event_id", Integer, ForeignKey("asset_event.id", ondelete="CASCADE"),
           primary_key=True),
    Column("asset_id", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# What each asset-triggered run consumed (its ``triggering_asset_events``). An event triggers a
# DAG at most once: the unique key refuses a second consumption.
dag_run_asset_event = Table(
    "dag_run_asset_event",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("dag_id", String(250), nullable=False),
    Column("asset_event_id", Integer, ForeignKey("asset_event.id", ondelete="CASCADE"),
           nullable=False),
    UniqueConstraint("dag_id", "asset_event_id"),
)

# The watchers of assets the triggerer runs: one row per (asset, watcher name).
asset_watcher = Table(
    "asset_watcher",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("asset_id", Integer, ForeignKey("asset.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(1500), nullable=False),
    Column("classpath", String(1000), nullable=False),
    Column("kwargs", Text, nullable=False),  # Fernet-encrypted JSON, as trigger kwargs
    Column("active", Boolean, nullable=False, default=True),
    Column("triggerer_id", Integer, nullable=True),
    Column("failures", Integer, nullable=False, default=0),
    Column("last_error", Text, nullable=True),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("events", Integer, nullable=False, default=0),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("asset_id", "name"),
)

# Which run a TriggerDagRunOperator try created which run from (to refuse a loop of DAGs that
# trigger each other).
dag_run_trigger = Table(
    "dag_run_trigger",
    metadata,
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"),
           primary_key=True),
    Column("parent_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"),
           nullable=False, index=True),
)
