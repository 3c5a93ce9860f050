"""``BaseSensor``: a task that waits for a condition by poking it.

Three ways to wait, as in Airflow:

- ``mode="poke"`` (default): the try keeps its worker slot and sleeps ``poke_interval``
  seconds between pokes;
- ``mode="reschedule"``: after a negative poke the try raises ``RescheduleTask``; the worker
  moves the task instance to ``up_for_reschedule`` with a ``reschedule_date``, frees the slot,
  and the scheduler queues the *same try* again when the date comes. The first poke's time and
  the poke count are kept on the task instance, so ``timeout`` and ``exponential_backoff`` run
  across reschedules;
- ``deferrable=True`` (built-in sensors that have a trigger): the try defers to a trigger run by
  the triggerer and resumes in ``execute_complete``.

``timeout`` is measured from the first poke of the try; past it the task fails without retrying
(``SensorTimeout``), or is skipped with ``soft_fail=True``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.exceptions import (
    FailTask,
    RescheduleTask,
    SensorTimeout,
    SkipTask,
    TaskDeferralTimeout,
    TaskTimeout,
)

__all__ = ["BaseSensor", "PokeReturnValue"]

log = logging.getLogger("statewright.task")

DEFAULT_POKE_INTERVAL = 60.0
DEFAULT_TIMEOUT = 7 * 24 * 3600.0
MODES = ("poke", "reschedule")


def _utcnow() -> datetime:
    return datetime.now(UTC)


# Seams replaced in tests so that no test waits for the wall clock.
_now: Callable[[], datetime] = _utcnow
_sleep: Callable[[float], Any] = time.sleep


class PokeReturnValue:
    """What ``poke`` may return instead of a bool: done or not, and the value to store."""

    def __init__(self, is_done: bool, xcom_value: Any = None) -> None:
        self.is_done = bool(is_done)
        self.xcom_value = xcom_value

    def __bool__(self) -> bool:
        return self.is_done

    def __repr__(self) -> str:
        return f"PokeReturnValue(is_done={self.is_done}, xcom_value={self.xcom_value!r})"


def _seconds(value: Any, what: str, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DagDefinitionError(f"{what} must be a number of seconds or a timedelta, "
                                 f"got {value!r}.")
    if value < 0:
        raise DagDefinitionError(f"{what} must not be negative, got {value}.")
    return float(value)


class BaseSensor(BaseOperator):
    """Wait until ``poke(context)`` returns true (or a done ``PokeReturnValue``)."""

    is_sensor = True
    #: Built-in sensors with a trigger set this; ``deferrable=True`` is refused otherwise.
    supports_deferral = False

    def __init__(
        self,
        *,
        poke_interval: timedelta | float = DEFAULT_POKE_INTERVAL,
        timeout: timedelta | float = DEFAULT_TIMEOUT,
        soft_fail: bool = False,
        mode: str = "poke",
        exponential_backoff: bool = False,
        max_wait: timedelta | float | None = None,
        deferrable: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = f"sensor {self.task_id!r}"
        self.poke_interval: float = _seconds(poke_interval, f"{where}: poke_interval")  # type: ignore[assignment]
        self.timeout: float = _seconds(timeout, f"{where}: timeout")  # type: ignore[assignment]
        self.max_wait = _seconds(max_wait, f"{where}: max_wait", allow_none=True)
        if mode not in MODES:
            raise DagDefinitionError(
                f"{where}: mode must be one of {', '.join(MODES)}; got {mode!r}.")
        if deferrable and not self.supports_deferral:
            raise DagDefinitionError(
                f"{where}: {type(self).__name__} has no trigger to defer to; use "
                "mode='reschedule' to free the worker between pokes.")
        self.mode = mode
        self.soft_fail = bool(soft_fail)
        self.exponential_backoff = bool(exponential_backoff)
        self.deferrable = bool(deferrable)

    @property
    def reschedule(self) -> bool:
        return self.mode == "reschedule"

    # -- the condition --------------------------------------------------------------------

    def poke(self, context: Any) -> bool | PokeReturnValue:
        """Check the condition once; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement poke(context)")

    def execute_deferrable(self, context: Any) -> Any:
        """Defer to this sensor's trigger (built-in sensors override it)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no trigger to defer to; implement "
            "execute_deferrable(context) or use mode='poke' or mode='reschedule'")

    def execute_complete(self, context: Any, event: Any = None) -> Any:
        """Resumed after the trigger fired: by default the condition is met."""
        return None

    # -- the waiting ------------------------------------------------------------------------

    def execute(self, context: Any) -> Any:
        if self.deferrable:
            return self._soft(lambda: self.execute_deferrable(context))
        return self._soft(lambda: self._wait(context))

    def _wait(self, context: Any) -> Any:
        ti = context["ti"]
        resumed = self.reschedule and getattr(ti, "first_poke_at", None) is not None
        started: datetime = ti.first_poke_at if resumed else _now()
        poke_count: int = int(getattr(ti, "poke_count", 0) or 0) if resumed else 0
        while True:
            poke_count += 1
            result = self.poke(context)
            if result:
                log.info("Sensor %s: condition met after %s poke(s)", self.task_id, poke_count)
                return result.xcom_value if isinstance(result, PokeReturnValue) else None
            elapsed = (_now() - started).total_seconds()
            if elapsed > self.timeout:
                raise SensorTimeout(
                    f"sensor {self.task_id!r} has waited {elapsed:.0f}s since its first poke, "
                    f"past its timeout of {self.timeout:g}s")
            interval = self.next_poke_interval(started, poke_count, elapsed)
            if self.reschedule:
                raise RescheduleTask(_now() + timedelta(seconds=interval),
                                     first_poke_at=started, poke_count=poke_count)
            log.info("Sensor %s: not yet; poking again in %gs", self.task_id, interval)
            _sleep(interval)

    def next_poke_interval(self, started: datetime, poke_count: int, elapsed: float) -> float:
        """Seconds until the next poke: ``poke_interval``, or Airflow's jittered doubling with
        ``exponential_backoff`` (bounded by ``max_wait`` and the time left before timeout)."""
        if not self.exponential_backoff:
            return self.poke_interval
        min_backoff = max(int(self.poke_interval * (2 ** (poke_count - 2))), 1)
        key = f"{self.dag_id}#{self.task_id}#{started.isoformat()}#{poke_count}"
        run_hash = int(hashlib.sha1(key.encode()).hexdigest(), 16)
        interval = float(min_backoff + run_hash % min_backoff)
        interval = min(interval, max(self.timeout - elapsed, 0.0))
        if self.max_wait is not None:
            interval = min(interval, self.max_wait)
        return interval

    def _soft(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (SensorTimeout, FailTask, TaskTimeout) as exc:
            if self.soft_fail:
                raise SkipTask(f"soft_fail: {exc}") from exc
            raise

    # -- deferral -----------------------------------------------------------------------------

    def resume_execution(
        self, next_method: str, next_kwargs: dict[str, Any] | None, context: Any
    ) -> Any:
        """A trigger timeout of a deferrable sensor is a sensor timeout (no retry)."""

        def resume() -> Any:
            try:
                return super(BaseSensor, self).resume_execution(next_method, next_kwargs,
                                                                context)
            except TaskDeferralTimeout as exc:
                raise SensorTimeout(
                    f"sensor {self.task_id!r} waited past its timeout of {self.timeout:g}s: "
                    f"{exc}") from exc

        return self._soft(resume)
