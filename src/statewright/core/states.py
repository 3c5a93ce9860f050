"""State types, state names and state groups of task instances and DAG runs.

Pure data: no I/O, no imports from the rest of the project. The *type* of a state drives
orchestration logic; the *name* (Prefect's idea) is what a person reads.
"""

from __future__ import annotations

from enum import StrEnum


class TaskInstanceState(StrEnum):
    """Airflow's task instance states (its 14, and 3.3's ``awaiting_input``). ``NONE`` is stored
    as the string ``"none"``."""

    NONE = "none"
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    SKIPPED = "skipped"
    UPSTREAM_FAILED = "upstream_failed"
    REMOVED = "removed"
    UP_FOR_RETRY = "up_for_retry"
    UP_FOR_RESCHEDULE = "up_for_reschedule"
    DEFERRED = "deferred"
    RESTARTING = "restarting"
    SHUTDOWN = "shutdown"
    AWAITING_INPUT = "awaiting_input"  # a person's response is awaited (human in the loop)


class DagRunState(StrEnum):
    """DAG run states: Airflow's four, DolphinScheduler's pause and Prefect's cancelled."""

    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"


TI = TaskInstanceState
RUN = DagRunState

# -- groups -------------------------------------------------------------------------------

TI_TERMINAL: frozenset[TaskInstanceState] = frozenset(
    {TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED}
)
TI_UNFINISHED: frozenset[TaskInstanceState] = frozenset(set(TI) - TI_TERMINAL)
# States in which a try is (or may be) executing user code somewhere.
TI_ACTIVE: frozenset[TaskInstanceState] = frozenset({TI.QUEUED, TI.RUNNING, TI.RESTARTING})
# Airflow's State.failed_states / State.success_states, used to decide a run from its leaves.
TI_FAILED_STATES: frozenset[TaskInstanceState] = frozenset({TI.FAILED, TI.UPSTREAM_FAILED})
TI_SUCCESS_STATES: frozenset[TaskInstanceState] = frozenset({TI.SUCCESS, TI.SKIPPED})

RUN_TERMINAL: frozenset[DagRunState] = frozenset({RUN.SUCCESS, RUN.FAILED, RUN.CANCELLED})
RUN_UNFINISHED: frozenset[DagRunState] = frozenset(set(RUN) - RUN_TERMINAL)


# -- state names --------------------------------------------------------------------------


class StateName(StrEnum):
    """Human names carried beside the type. The default name of a type is its title case."""

    PENDING = "Pending"
    SCHEDULED = "Scheduled"
    QUEUED = "Queued"
    RUNNING = "Running"
    RETRYING = "Retrying"
    RESUMING = "Resuming"
    SUCCESS = "Success"
    CACHED = "Cached"
    FAILED = "Failed"
    CRASHED = "Crashed"
    INTERRUPTED = "Interrupted"  # its worker stopped (SIGTERM) and asked the try to end
    TIMED_OUT = "TimedOut"
    SKIPPED = "Skipped"
    UPSTREAM_FAILED = "UpstreamFailed"
    REMOVED = "Removed"
    AWAITING_RETRY = "AwaitingRetry"
    AWAITING_RESCHEDULE = "AwaitingReschedule"
    DEFERRED = "Deferred"
    RESTARTING = "Restarting"
    SHUTDOWN = "Shutdown"
    AWAITING_INPUT = "AwaitingInput"
    LATE = "Late"
    CANCELLED = "Cancelled"
    PAUSED = "Paused"
    CANCELLING = "Cancelling"
    # Prefect's names of flow runs and their task runs (statewright.flows).
    COMPLETED = "Completed"
    ROLLED_BACK = "RolledBack"  # completed, but its transaction rolled back (rollback hooks ran)
    SUSPENDED = "Suspended"  # a flow run paused with its process ended (suspend_flow_run)
    NOT_READY = "NotReady"  # a flow's task run whose upstream task run did not complete


_DEFAULT_TI_NAMES: dict[TaskInstanceState, StateName] = {
    TI.NONE: StateName.PENDING,
    TI.SCHEDULED: StateName.SCHEDULED,
    TI.QUEUED: StateName.QUEUED,
    TI.RUNNING: StateName.RUNNING,
    TI.SUCCESS: StateName.SUCCESS,
    TI.FAILED: StateName.FAILED,
    TI.SKIPPED: StateName.SKIPPED,
    TI.UPSTREAM_FAILED: StateName.UPSTREAM_FAILED,
    TI.REMOVED: StateName.REMOVED,
    TI.UP_FOR_RETRY: StateName.AWAITING_RETRY,
    TI.UP_FOR_RESCHEDULE: StateName.AWAITING_RESCHEDULE,
    TI.DEFERRED: StateName.DEFERRED,
    TI.RESTARTING: StateName.RESTARTING,
    TI.SHUTDOWN: StateName.SHUTDOWN,
    TI.AWAITING_INPUT: StateName.AWAITING_INPUT,
}

_DEFAULT_RUN_NAMES: dict[DagRunState, StateName] = {
    RUN.QUEUED: StateName.QUEUED,
    RUN.RUNNING: StateName.RUNNING,
    RUN.PAUSED: StateName.PAUSED,
    RUN.SUCCESS: StateName.SUCCESS,
    RUN.FAILED: StateName.FAILED,
    RUN.CANCELLED: StateName.CANCELLED,
}

# Which names may be carried by which type (a name outside this set is a bug).
TI_NAMES_BY_TYPE: dict[TaskInstanceState, frozenset[StateName]] = {
    TI.NONE: frozenset({StateName.PENDING, StateName.NOT_READY}),
    TI.SCHEDULED: frozenset({StateName.SCHEDULED, StateName.LATE, StateName.RESUMING}),
    TI.QUEUED: frozenset({StateName.QUEUED, StateName.LATE}),
    TI.RUNNING: frozenset({StateName.RUNNING, StateName.RETRYING, StateName.RESUMING}),
    TI.SUCCESS: frozenset(
        {StateName.SUCCESS, StateName.CACHED, StateName.COMPLETED, StateName.ROLLED_BACK}
    ),
    TI.FAILED: frozenset(
        {StateName.FAILED, StateName.CRASHED, StateName.TIMED_OUT, StateName.CANCELLED,
         StateName.INTERRUPTED}
    ),
    TI.SKIPPED: frozenset({StateName.SKIPPED, StateName.CANCELLED}),
    TI.UPSTREAM_FAILED: frozenset({StateName.UPSTREAM_FAILED, StateName.CANCELLED}),
    TI.REMOVED: frozenset({StateName.REMOVED}),
    TI.UP_FOR_RETRY: frozenset(
        {StateName.AWAITING_RETRY, StateName.CRASHED, StateName.TIMED_OUT, StateName.INTERRUPTED}
    ),
    TI.UP_FOR_RESCHEDULE: frozenset({StateName.AWAITING_RESCHEDULE}),
    TI.DEFERRED: frozenset({StateName.DEFERRED}),
    TI.RESTARTING: frozenset({StateName.RESTARTING}),
    TI.SHUTDOWN: frozenset({StateName.SHUTDOWN, StateName.CANCELLING}),
    TI.AWAITING_INPUT: frozenset({StateName.AWAITING_INPUT}),
}

RUN_NAMES_BY_TYPE: dict[DagRunState, frozenset[StateName]] = {
    RUN.QUEUED: frozenset({StateName.QUEUED, StateName.LATE, StateName.PENDING,
                           StateName.RESUMING}),
    RUN.RUNNING: frozenset({StateName.RUNNING, StateName.RETRYING}),
    RUN.PAUSED: frozenset({StateName.PAUSED, StateName.SUSPENDED}),
    RUN.SUCCESS: frozenset({StateName.SUCCESS, StateName.COMPLETED}),
    RUN.FAILED: frozenset({StateName.FAILED, StateName.CRASHED, StateName.TIMED_OUT}),
    RUN.CANCELLED: frozenset({StateName.CANCELLED}),
}


def default_ti_name(state: TaskInstanceState, try_number: int = 0) -> StateName:
    """The name a task instance state carries when no more specific name is given."""
    if state is TI.RUNNING and try_number > 1:
        return StateName.RETRYING
    return _DEFAULT_TI_NAMES[state]


def default_run_name(state: DagRunState) -> StateName:
    return _DEFAULT_RUN_NAMES[state]
