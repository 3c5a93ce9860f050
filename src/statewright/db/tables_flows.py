"""Tables of flows (``statewright.flows``): a flow run's process and a served flow's deployment.

A flow is a ``dag`` row of kind ``flow``; a flow run a ``dag_run``; each task run a
``task_instance``. ``flow_run`` adds what a flow run has beside: its parent (a subflow's run
and the parent's task instance that stands for it), its parameters, and the processes that run
and record it, with the recorder's heartbeat.
"""

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
    false,
)

from statewright.db.tables import UTCDateTime, metadata

flow_run = Table(
    "flow_run",
    metadata,
    Column("dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="CASCADE"),
           primary_key=True),
    Column("parent_dag_run_id", Integer, ForeignKey("dag_run.id", ondelete="SET NULL"),
           nullable=True),
    Column("parent_task_instance_id", Integer, nullable=True),
    Column("parameters", JSON, nullable=True),
    Column("deployment", String(250), nullable=True),
    Column("hostname", String(1000), nullable=True),
    Column("pid", Integer, nullable=True),  # the flow's process
    Column("recorder_pid", Integer, nullable=True),
    Column("last_heartbeat_at", UTCDateTime, nullable=True),
    # a pause under way: {"key": ..., "schema": <JSON schema of the input> | null}
    Column("wanted_input", JSON, nullable=True),
    # pauses already resumed: {key: the input given (null without one)}
    Column("pause_inputs", JSON, nullable=True),
    # @flow(durable=True): completed task calls' results are recorded; a crash can be resumed
    Column("durable", Boolean, nullable=False, server_default=false()),
    Column("retries", Integer, nullable=False, server_default="0"),  # automatic resumes
    Column("resumes", Integer, nullable=False, server_default="0"),  # resumes so far
    Index(None, "last_heartbeat_at"),
    Index(None, "parent_dag_run_id"),
)

# ``flow.serve(name, cron=..., interval=..., parameters=...)``: what a scheduled run starts.
flow_deployment = Table(
    "flow_deployment",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dag_id", String(250), ForeignKey("dag.dag_id", ondelete="CASCADE"), nullable=False),
    Column("name", String(250), nullable=False),
    Column("entrypoint", Text, nullable=False),  # path/to/file.py:function
    Column("parameters", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("dag_id", "name"),
)

# ``with concurrency("pool-name", occupy=n):`` in a flow (Prefect's global concurrency limits):
# the slots a block holds of a pool, until it ends or the lease expires (a process that died).
concurrency_lease = Table(
    "concurrency_lease",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("pool", String(256), ForeignKey("pool.name", ondelete="CASCADE"), nullable=False),
    Column("slots", Integer, nullable=False),
    Column("holder", String(1000), nullable=True),  # host:pid of the process holding them
    Column("expires_at", UTCDateTime, nullable=False),
    Index(None, "pool", "expires_at"),
)
