"""Exceptions a task raises to steer its own outcome.

``SkipTask`` and ``FailTask`` carry Airflow's names as aliases (``AirflowSkipException``,
``AirflowFailException``) so DAG files written for Airflow keep working.
"""

from __future__ import annotations

from statewright.core.errors import StatewrightError


class SkipTask(StatewrightError):
    """Raised by a task to end its try as *skipped* (the message is the reason)."""


class FailTask(StatewrightError):
    """Raised by a task to fail at once, without the retries it would otherwise get."""


class TaskTimeout(BaseException):
    """The try ran past its ``execution_timeout``.

    It derives from ``BaseException`` (as Airflow's ``AirflowTaskTimeout`` does) so that a bare
    ``except Exception`` in user code cannot swallow it. The try fails and may be retried.
    """


AirflowSkipException = SkipTask
AirflowFailException = FailTask
AirflowTaskTimeout = TaskTimeout

__all__ = [
    "AirflowFailException",
    "AirflowSkipException",
    "AirflowTaskTimeout",
    "FailTask",
    "SkipTask",
    "TaskTimeout",
]
