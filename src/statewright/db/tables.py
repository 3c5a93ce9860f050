"""The tables, as SQLAlchemy Core metadata. The Alembic migrations are the frozen copy of this."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every database (SQLite stores them naive, in UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r} given where UTC is required")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment: datetime = value
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        """On SQLite, the driver's text → datetime and the UTC zone in one call per value (a
        grid reads 50,000 dates): the same values as ``process_result_value`` gives."""
        if dialect.name != "sqlite":
            return super().result_processor(dialect, coltype)
        parse: Callable[[Any], Any] | None = self.impl_instance.result_processor(dialect, coltype)

        def process(value: Any) -> datetime | None:
            if value is None:
                return None
            moment: datetime = parse(value) if parse is not None else value
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

        return process


metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

dag = Table(
    "dag",
    metadata,
    Column("dag_id", String(250), primary_key=True),
    Column("fileloc", Text, nullable=True),
    Column("is_paused", Boolean, nullable=False, default=False),
    Column("is_active", Boolean, nullable=False, default=True),
    Column("description", Text, nullable=True),
    Column("serialized", JSON, nullable=False),
    Column("dag_hash", String(64), nullable=False),
    Column("timetable", JSON, nullable=True),
    Column("schedule_summary", String(200), nullable=True),
    Column("max_active_runs", Integer, nullable=False, default=16),
    Column("max_active_tasks", Integer, nullable=False, default=16),
    Column("fail_stop", Boolean, nullable=False, default=False),
    Column("next_dagrun", UTCDateTime, nullable=True),
    Column("next_dagrun_data_interval_start", UTCDateTime, nullable=True),
    Column("next_dagrun_data_interval_end", UTCDateTime, nullable=True),
    Column("next_dagrun_create_after", UTCDateTime, nullable=True),
    Column("last_parsed_at", UTCDateTime, nullable=True),
    Column("tags", JSON, nullable=True),
    Column("kind", String(20), nullable=False, default="dag", server_default="dag"),  # or flow
    Column("deadline", JSON, nullable=True),  # the DAG's serialized deadline alerts, if any
    Index(None, "next_dagrun_create_after"),
    # Covering: the hash is read on every scheduler loop without touching the (large) row.
    Index(None, "dag_id", "dag_hash"),
    Index(None, "kind", "dag_id"),  # flows left out of the scheduler's reads, by index
)

dag_run = Table(
    "dag_run",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), ForeignKey("dag.dag_id", ondelete="CASCADE"), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("run_type", String(50), nullable=False),
    Column("logical_date", UTCDateTime, nullable=True),
    Column("data_interval_start", UTCDateTime, nullable=True),
    Column("data_interval_end", UTCDateTime, nullable=True),
    Column("run_after", UTCDateTime, nullable=True),
    Column("state", String(20), nullable=False),
    Column("state_name", String(40), nullable=False),
    Column("state_message", Text, nullable=True),
    Column("conf", JSON, nullable=True),
    Column("triggered_by", String(100), nullable=True),
    Column("queued_at", UTCDateTime, nullable=True),
    Column("start_date", UTCDateTime, nullable=True),
    Column("end_date", UTCDateTime, nullable=True),
    Column("clear_number", Integer, nullable=False, default=0),
    Column("updated_at", UTCDateTime, nullable=True),
    Column("dag_version_id", Integer, nullable=True),  # the DAG version it was created with
    Column("partition_key", String(250), nullable=True),  # partitioned runs (migration 0014)
    Column("partition_date", UTCDateTime, nullable=True),
    UniqueConstraint("dag_id", "run_id"),
    Index(None, "state", "dag_id"),
    Index(None, "dag_id", "logical_date"),
    Index(None, "dag_id", "partition_key"),
)

trigger = Table(
    "trigger",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("classpath", String(1000), nullable=False),
    Column("kwargs", Text, nullable=False),  # Fernet-encrypted JSON
    Column("created_date", UTCDateTime, nullable=False),
    Column("triggerer_id", Integer, nullable=True, index=True),
)

task_instance = Table(
    "task_instance",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("map_index", Integer, nullable=False, default=-1),
    Column("rendered_map_index", String(250), nullable=True),  # map_index_template's name
    Column("state", String(20), nullable=False),
    Column("state_name", String(40), nullable=False),
    Column("state_message", Text, nullable=True),
    Column("try_number", Integer, nullable=False, default=0),
    Column("max_tries", Integer, nullable=False, default=0),
    Column("operator", String(100), nullable=True),
    Column("priority_weight", Integer, nullable=False, default=1),
    Column("pool", String(256), nullable=False, default="default_pool"),
    Column("pool_slots", Integer, nullable=False, default=1),
    Column("queue", String(256), nullable=False, default="default"),
    Column("hostname", String(1000), nullable=True),
    Column("pid", Integer, nullable=True),
    Column("executor", String(100), nullable=True),
    Column("worker_id", String(250), nullable=True),
    Column("last_heartbeat_at", UTCDateTime, nullable=True),
    Column("scheduled_at", UTCDateTime, nullable=True),
    Column("queued_at", UTCDateTime, nullable=True),
    Column("start_date", UTCDateTime, nullable=True),
    Column("end_date", UTCDateTime, nullable=True),
    Column("duration", Float, nullable=True),
    Column("next_retry_at", UTCDateTime, nullable=True),
    Column("reschedule_date", UTCDateTime, nullable=True),
    Column("first_poke_at", UTCDateTime, nullable=True),
    Column("poke_count", Integer, nullable=False, default=0),
    Column("trigger_id", Integer, ForeignKey("trigger.id", ondelete="SET NULL"), nullable=True),
    Column("next_method", String(1000), nullable=True),
    Column("next_kwargs", JSON, nullable=True),
    Column("trigger_timeout", UTCDateTime, nullable=True),
    Column("updated_at", UTCDateTime, nullable=True),
    Column("dag_version_id", Integer, nullable=True),  # the DAG version its try ran (or will)
    UniqueConstraint("dag_run_id", "task_id", "map_index"),
    Index(None, "state", "dag_id"),
    Index(None, "dag_id", "run_id"),
    Index(None, "trigger_id"),
    # The triggerer's timeout sweep reads only the deferred whose timeout has passed.
    Index(None, "state", "trigger_timeout"),
)
# The queueing order within a run (``scheduling.queue_candidates``): the first few scheduled
# task instances of each run are read from the index, never sorted from all of them.
Index("ix_task_instance_queue_order", task_instance.c.state, task_instance.c.dag_run_id,
      task_instance.c.priority_weight.desc(), task_instance.c.id)

task_instance_history = Table(
    "task_instance_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_instance_id", Integer, nullable=False, index=True),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("map_index", Integer, nullable=False, default=-1),
    Column("try_number", Integer, nullable=False),
    Column("state", String(20), nullable=False),
    Column("state_name", String(40), nullable=False),
    Column("state_message", Text, nullable=True),
    Column("hostname", String(1000), nullable=True),
    Column("pid", Integer, nullable=True),
    Column("start_date", UTCDateTime, nullable=True),
    Column("end_date", UTCDateTime, nullable=True),
    Column("duration", Float, nullable=True),
    Column("error", Text, nullable=True),
    Column("traceback", Text, nullable=True),
    Column("log_path", Text, nullable=True),
    Column("dag_version_id", Integer, nullable=True),  # the DAG version the try ran
)

state_transition = Table(
    "state_transition",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("entity", String(20), nullable=False),  # "task_instance" | "dag_run"
    Column("entity_id", Integer, nullable=False),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=True),
    Column("map_index", Integer, nullable=True),  # NULL for a DAG run's rows
    Column("from_state", String(20), nullable=True),  # NULL: the row was created
    Column("to_state", String(20), nullable=False),
    Column("name", String(40), nullable=False),
    Column("message", Text, nullable=True),
    Column("actor", String(100), nullable=False),  # scheduler, … or user:alice, cli:bob
    Column("try_number", Integer, nullable=True),
    Column("at", UTCDateTime, nullable=False),
    Index(None, "entity", "entity_id"),
    Index(None, "dag_id", "run_id"),
)

xcom = Table(
    "xcom",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("map_index", Integer, nullable=False, default=-1),
    Column("key", String(512), nullable=False, default="return_value"),
    Column("value", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("dag_run_id", "task_id", "map_index", "key"),
)

import_error = Table(
    "import_error",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("filename", Text, nullable=False, unique=True),
    Column("stacktrace", Text, nullable=False),
    Column("timestamp", UTCDateTime, nullable=False),
)

job = Table(
    "job",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_type", String(30), nullable=False),
    Column("hostname", String(1000), nullable=True),
    Column("pid", Integer, nullable=True),
    Column("status", String(20), nullable=False),  # running | stopped (not a state machine)
    Column("start_date", UTCDateTime, nullable=False),
    Column("end_date", UTCDateTime, nullable=True),
    Column("latest_heartbeat", UTCDateTime, nullable=False),
    Column("capacity", Integer, nullable=True),
    Index(None, "job_type", "status", "latest_heartbeat"),
)

task_reschedule = Table(
    "task_reschedule",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_instance_id", Integer, ForeignKey("task_instance.id", ondelete="CASCADE"),
           nullable=False, index=True),
    Column("try_number", Integer, nullable=False),
    Column("start_date", UTCDateTime, nullable=False),
    Column("end_date", UTCDateTime, nullable=False),
    Column("duration", Float, nullable=False),
    Column("reschedule_date", UTCDateTime, nullable=False),
)

pool = Table(
    "pool",
    metadata,
    Column("name", String(256), primary_key=True),
    Column("slots", Integer, nullable=False),
    Column("description", Text, nullable=True),
    Column("include_deferred", Boolean, nullable=False, default=False),
)

dag_file = Table(
    "dag_file",
    metadata,
    Column("fileloc", Text, primary_key=True),
    Column("mtime", Float, nullable=False),
    Column("size", Integer, nullable=False),
    Column("content_hash", String(64), nullable=True),  # NULL: parse again next time
    Column("dag_ids", JSON, nullable=False),  # the DAG ids this file defined at its last parse
    Column("last_parsed_at", UTCDateTime, nullable=False),
    Column("parse_duration", Float, nullable=True),
)

backfill = Table(
    "backfill",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), ForeignKey("dag.dag_id", ondelete="CASCADE"), nullable=False),
    Column("from_date", UTCDateTime, nullable=False),
    Column("to_date", UTCDateTime, nullable=False),
    Column("run_backwards", Boolean, nullable=False, default=False),
    Column("dag_run_conf", JSON, nullable=True),
    Column("reprocess_behavior", String(20), nullable=False),
    Column("max_active_runs", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("completed_at", UTCDateTime, nullable=True),
    Column("is_paused", Boolean, nullable=False, default=False, server_default=false()),
    Column("updated_at", UTCDateTime, nullable=False),
    Index(None, "completed_at"),
)

backfill_dag_run = Table(
    "backfill_dag_run",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("backfill_id", Integer, ForeignKey("backfill.id", ondelete="CASCADE"), nullable=False),
    Column("sort_ordinal", Integer, nullable=False),
    Column("logical_date", UTCDateTime, nullable=False),
    Column("data_interval_start", UTCDateTime, nullable=False),
    Column("data_interval_end", UTCDateTime, nullable=False),
    Column("run_after", UTCDateTime, nullable=False),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="SET NULL"), nullable=True),
    Column("exception_reason", String(50), nullable=True),  # why no run was created
    UniqueConstraint("backfill_id", "logical_date"),
)

# Results of tasks with a ``cache_key_fn`` (Prefect's Cached), keyed by task and cache key.
task_cache = Table(
    "task_cache",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), nullable=False),
    Column("task_id", String(250), nullable=False),
    Column("cache_key", String(500), nullable=False),
    Column("value", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),  # NULL: never expires
    Column("run_id", String(250), nullable=True),  # the run whose try stored it
    Column("try_number", Integer, nullable=True),
    UniqueConstraint("dag_id", "task_id", "cache_key"),
)

# Outbox of DAG-level callbacks: written with the run's final transition, run by an executor.
dag_callback = Table(
    "dag_callback",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"), nullable=False),
    Column("dag_id", String(250), nullable=False),
    Column("run_id", String(250), nullable=False),
    Column("kind", String(30), nullable=False),  # on_success_callback | on_failure_callback
    Column("run_state", String(20), nullable=False),  # the state the run reached
    Column("reason", Text, nullable=True),
    Column("status", String(20), nullable=False),  # pending | running | done | failed
    Column("created_at", UTCDateTime, nullable=False),
    Column("claimed_at", UTCDateTime, nullable=True),
    Column("claimed_by", String(250), nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("error", Text, nullable=True),
    Index(None, "status", "created_at"),
)


# Tables of later capabilities live in modules of their own, on the same metadata.
from statewright.db import (  # noqa: E402, F401
    tables_assets,
    tables_auth,
    tables_deadlines,
    tables_favorites,
    tables_flows,
    tables_hitl,
    tables_notes,
    tables_secrets,
    tables_task_state,
    tables_templating,
    tables_versions,
)
