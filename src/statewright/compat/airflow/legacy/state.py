"""``airflow.utils.state.State``: Airflow 2's constants of task and run states (strings)."""

from __future__ import annotations

from statewright.core.states import TaskInstanceState as TI

__all__ = ["State"]


class State:
    """The state names DAG files compare with (``State.SUCCESS == "success"``); ``NONE`` is
    None, as in Airflow."""

    NONE = None
    SCHEDULED = TI.SCHEDULED.value
    QUEUED = TI.QUEUED.value
    RUNNING = TI.RUNNING.value
    SUCCESS = TI.SUCCESS.value
    FAILED = TI.FAILED.value
    SKIPPED = TI.SKIPPED.value
    UPSTREAM_FAILED = TI.UPSTREAM_FAILED.value
    REMOVED = TI.REMOVED.value
    UP_FOR_RETRY = TI.UP_FOR_RETRY.value
    UP_FOR_RESCHEDULE = TI.UP_FOR_RESCHEDULE.value
    DEFERRED = TI.DEFERRED.value
    RESTARTING = TI.RESTARTING.value
    SHUTDOWN = TI.SHUTDOWN.value
    finished = frozenset({SUCCESS, FAILED, SKIPPED, UPSTREAM_FAILED, REMOVED})
    unfinished = frozenset({NONE, SCHEDULED, QUEUED, RUNNING, SHUTDOWN, RESTARTING,
                            UP_FOR_RETRY, UP_FOR_RESCHEDULE, DEFERRED})
    failed_states = frozenset({FAILED, UPSTREAM_FAILED})
    success_states = frozenset({SUCCESS, SKIPPED})
