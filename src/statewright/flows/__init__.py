"""Prefect 3's authoring API on statewright: ``@flow``, ``@task``, futures, states, hooks,
transactions, pauses and the run logger. Flow runs and task runs are DAG runs and task
instances, every state change recorded through the one door as it happens."""

from __future__ import annotations

from statewright.flows import cache_policies
from statewright.flows.annotations import allow_failure, quote
from statewright.flows.backend import MemoryBackend
from statewright.flows.client import get_client
from statewright.flows.context import (
    MissingContextError,
    get_run_context,
    get_run_logger,
)
from statewright.flows.engine import TerminationSignal, unmapped
from statewright.flows.flow_engine import FlowRunSuspended
from statewright.flows.flows import Flow, flow
from statewright.flows.futures import PrefectFutureList, TaskRunFuture, as_completed, wait
from statewright.flows.pausing import pause_flow_run, suspend_flow_run
from statewright.flows.runtime import use_backend
from statewright.flows.states import (
    AwaitingRetry,
    Cached,
    Cancelled,
    Completed,
    Crashed,
    Failed,
    Paused,
    Pending,
    Retrying,
    RolledBack,
    Running,
    Scheduled,
    State,
    StateType,
    Suspended,
    UnknownStateType,
)
from statewright.flows.task_runners import (
    CeleryTaskRunner,
    DaskTaskRunner,
    ProcessPoolTaskRunner,
    TaskArgumentNotSerializable,
    ThreadPoolTaskRunner,
)
from statewright.flows.tasks import Task, task
from statewright.flows.transactions import CommitMode, Transaction, get_transaction, transaction

PrefectFuture = TaskRunFuture

__all__ = [
    "AwaitingRetry",
    "Cached",
    "Cancelled",
    "CeleryTaskRunner",
    "CommitMode",
    "Completed",
    "Crashed",
    "DaskTaskRunner",
    "Failed",
    "Flow",
    "FlowRunSuspended",
    "MemoryBackend",
    "MissingContextError",
    "Paused",
    "Pending",
    "PrefectFuture",
    "PrefectFutureList",
    "ProcessPoolTaskRunner",
    "Retrying",
    "RolledBack",
    "Running",
    "Scheduled",
    "State",
    "StateType",
    "Suspended",
    "Task",
    "TaskArgumentNotSerializable",
    "TaskRunFuture",
    "TerminationSignal",
    "ThreadPoolTaskRunner",
    "Transaction",
    "UnknownStateType",
    "allow_failure",
    "as_completed",
    "cache_policies",
    "flow",
    "get_client",
    "get_run_context",
    "get_run_logger",
    "get_transaction",
    "pause_flow_run",
    "quote",
    "suspend_flow_run",
    "task",
    "transaction",
    "unmapped",
    "use_backend",
    "wait",
]
