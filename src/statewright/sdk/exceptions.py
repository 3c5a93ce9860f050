"""Exceptions a task raises to steer its own outcome.

``SkipTask`` and ``FailTask`` carry Airflow's names as aliases (``AirflowSkipException``,
``AirflowFailException``) so DAG files written for Airflow keep working.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from statewright.sdk.triggers.base import BaseTrigger


class SkipTask(StatewrightError):
    """Raised by a task to end its try as *skipped* (the message is the reason)."""


class FailTask(StatewrightError):
    """Raised by a task to fail at once, without the retries it would otherwise get."""


class TaskTimeout(BaseException):
    """The try ran past its ``execution_timeout``.

    It derives from ``BaseException`` (as Airflow's ``AirflowTaskTimeout`` does) so that a bare
    ``except Exception`` in user code cannot swallow it. The try fails and may be retried.
    """


class TaskDeferred(BaseException):
    """Raised by ``BaseOperator.defer``: the try waits on a trigger, its worker slot is freed.

    The trigger is serialized here, in the task, so kwargs that cannot be stored fail the task
    with a clear error at ``defer()`` time (a ``SerializationError``), never in the triggerer.
    Like Airflow's, it derives from ``BaseException`` so that ``except Exception`` in user code
    does not swallow it.
    """

    def __init__(
        self,
        *,
        trigger: BaseTrigger,
        method_name: str,
        kwargs: dict[str, Any] | None = None,
        timeout: timedelta | float | None = None,
    ) -> None:
        from statewright.sdk import serde

        if not hasattr(trigger, "serialize") or not hasattr(trigger, "run"):
            raise TypeError(
                f"defer(trigger=...) takes a BaseTrigger instance, got {type(trigger).__name__}"
            )
        classpath, trigger_kwargs = trigger.serialize()
        self.trigger = trigger
        self.classpath: str = classpath
        self.trigger_kwargs: Any = serde.serialize(
            trigger_kwargs, path=f"kwargs of trigger {classpath}"
        )
        self.method_name = method_name
        self.kwargs: dict[str, Any] = {
            str(k): serde.serialize(v, path=f"defer(kwargs={{{k!r}: ...}})")
            for k, v in (kwargs or {}).items()
        }
        if timeout is not None and not isinstance(timeout, timedelta):
            timeout = timedelta(seconds=float(timeout))
        if timeout is not None and timeout <= timedelta(0):
            raise ValueError(f"defer(timeout=...) must be positive, got {timeout}")
        self.timeout: timedelta | None = timeout
        super().__init__(f"deferred to {classpath}, resuming in {method_name}")


class TaskAwaitingInput(BaseException):
    """Raised by a task that asks a person for input (``HITLOperator``, ``pause_for_input``):
    the try waits in ``awaiting_input`` with no process, no slot and no trigger, and resumes in
    ``method_name(context, event=..., **kwargs)`` once a person responds or ``timeout`` passes
    (Airflow 3.3's ``TaskAwaitingInput``). ``request`` is what the person is asked (subject,
    body, options, multiple, defaults, params, respondents); the supervising worker records it.
    """

    def __init__(
        self,
        *,
        method_name: str,
        request: dict[str, Any],
        timeout: timedelta | float | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        from statewright.sdk import serde

        if timeout is not None and not isinstance(timeout, timedelta):
            timeout = timedelta(seconds=float(timeout))
        if timeout is not None and timeout <= timedelta(0):
            raise ValueError(f"response_timeout must be positive, got {timeout}")
        if not request.get("options"):
            raise ValueError("a request for input needs at least one option")
        self.method_name = method_name
        self.timeout: timedelta | None = timeout
        self.request = serde.serialize(dict(request), path="the request for input")
        self.kwargs: dict[str, Any] = {
            str(k): serde.serialize(v, path=f"kwargs[{k!r}]") for k, v in (kwargs or {}).items()}
        super().__init__(f"awaiting input, resuming in {method_name}")


class RescheduleTask(StatewrightError):
    """Raised by a sensor in ``mode="reschedule"``: free the worker, poke again at a moment.

    ``first_poke_at`` and ``poke_count`` are kept on the task instance across the reschedules
    of one try (Airflow's ``AirflowRescheduleException``).
    """

    def __init__(
        self, reschedule_date: datetime, *, first_poke_at: datetime | None = None,
        poke_count: int = 0,
    ) -> None:
        if reschedule_date.tzinfo is None:
            raise ValueError("reschedule_date must be a timezone-aware datetime")
        self.reschedule_date = reschedule_date
        self.first_poke_at = first_poke_at
        self.poke_count = poke_count
        super().__init__(f"rescheduled to {reschedule_date.isoformat()}")


class TaskDeferralError(StatewrightError):
    """A deferred try could not resume: its trigger failed or could not be loaded."""


class TaskDeferralTimeout(StatewrightError):
    """A deferred try waited on its trigger past the ``timeout`` given to ``defer``."""


class SensorTimeout(FailTask):
    """A sensor waited past its ``timeout``: the task fails without retrying (or is skipped
    with ``soft_fail=True``)."""


AirflowSkipException = SkipTask
AirflowFailException = FailTask
AirflowTaskTimeout = TaskTimeout
AirflowRescheduleException = RescheduleTask
AirflowSensorTimeout = SensorTimeout

__all__ = [
    "AirflowFailException",
    "AirflowRescheduleException",
    "AirflowSensorTimeout",
    "AirflowSkipException",
    "AirflowTaskTimeout",
    "FailTask",
    "RescheduleTask",
    "SensorTimeout",
    "SkipTask",
    "TaskAwaitingInput",
    "TaskDeferralError",
    "TaskDeferralTimeout",
    "TaskDeferred",
    "TaskTimeout",
]
