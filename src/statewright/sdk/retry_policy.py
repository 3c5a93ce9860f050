"""Retry policies: a task's own say, from the exception, on retrying a failed try.

Airflow 3.3's ``retry_policy=`` (``airflow.sdk.RetryPolicy``, ``ExceptionRetryPolicy``,
``RetryRule``, ``RetryAction``, ``RetryDecision``). The policy runs in the task's process, where
the exception is, and its decision travels with the try's outcome; the worker then decides retry
or fail with the task's retries (``statewright.core.retry.decide_failure``):

- ``RetryAction.FAIL``: the task instance fails at once, whatever retries are left;
- ``RetryAction.RETRY``: retried while the task's retries allow it (never more), after the rule's
  ``retry_delay`` when it has one, else after the task's usual delay;
- ``RetryAction.DEFAULT``: the usual rule.

A policy is not asked about ``AirflowFailException`` (which fails at once) nor about skips,
reschedules or deferrals; a policy that raises is logged and the usual rule applies.
"""

from __future__ import annotations

import abc
import importlib
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.retry import MAX_REASON_CHARS

__all__ = ["ExceptionRetryPolicy", "RetryAction", "RetryDecision", "RetryPolicy", "RetryRule"]

log = logging.getLogger("statewright.task")

EXTRA_KEY = "retry_policy"
"""Where a try's outcome carries its policy's decision (``TaskOutcome.extra``)."""


class RetryAction(Enum):
    """What a failure leads to."""

    RETRY = "retry"
    FAIL = "fail"
    DEFAULT = "default"


@dataclass(frozen=True)
class RetryDecision:
    """A policy's answer for one failure: ``retry_delay`` overrides the task's delay for this
    retry; ``reason`` is logged and kept in the state's message."""

    action: RetryAction = RetryAction.DEFAULT
    retry_delay: timedelta | None = None
    reason: str | None = None

    @classmethod
    def fail(cls, reason: str | None = None) -> RetryDecision:
        return cls(action=RetryAction.FAIL, reason=reason)

    @classmethod
    def retry(cls, delay: timedelta | None = None, reason: str | None = None) -> RetryDecision:
        return cls(action=RetryAction.RETRY, retry_delay=delay, reason=reason)

    @classmethod
    def default(cls) -> RetryDecision:
        return cls(action=RetryAction.DEFAULT)


class RetryPolicy(abc.ABC):
    """Subclass and implement :meth:`evaluate` for a policy of your own."""

    @abc.abstractmethod
    def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                 context: Any = None) -> RetryDecision:
        """Decide for ``exception``, raised by try ``try_number`` (from 1) of a task allowed
        ``max_tries`` retries."""

    def serialize(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement serialize()")

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RetryPolicy:
        raise NotImplementedError


ExceptionSpec = type[BaseException] | str


def _dotted_path(spec: ExceptionSpec) -> str:
    return spec if isinstance(spec, str) else f"{spec.__module__}.{spec.__qualname__}"


def _import_class(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@dataclass
class RetryRule:
    """An exception (a class, a dotted path, or a list of them) and what it leads to. With
    ``match_subclasses`` (the default) subclasses match too; else only the exact class."""

    exception: ExceptionSpec | list[ExceptionSpec]
    action: RetryAction = RetryAction.RETRY
    retry_delay: timedelta | None = None
    reason: str | None = None
    match_subclasses: bool = True
    _classes: tuple[type[BaseException], ...] | None = field(
        default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.action = RetryAction(self.action)
        for spec in self._specs:
            if isinstance(spec, str):
                if "." not in spec:
                    raise ValueError("RetryRule exception string must be a dotted import path "
                                     f"(e.g. 'builtins.ValueError'), got {spec!r}")
            elif not (isinstance(spec, type) and issubclass(spec, BaseException)):
                raise TypeError(f"RetryRule exception must be an exception class or a dotted "
                                f"path, got {spec!r}")

    @property
    def _specs(self) -> list[ExceptionSpec]:
        return list(self.exception) if isinstance(self.exception, list) else [self.exception]

    @property
    def exception_path(self) -> str:
        return ",".join(_dotted_path(s) for s in self._specs)

    def matches(self, exc: BaseException) -> bool:
        classes = self._resolved()
        if self.match_subclasses:
            return bool(classes) and isinstance(exc, classes)
        return type(exc) in classes

    def _resolved(self) -> tuple[type[BaseException], ...]:
        """The rule's classes, imported once; a path that cannot be imported never matches
        (``requests`` absent: its ``HTTPError`` cannot have been raised)."""
        if self._classes is None:
            found = []
            for spec in self._specs:
                try:
                    found.append(spec if isinstance(spec, type) else _import_class(spec))
                except (ImportError, AttributeError, ValueError):
                    log.warning("Could not import exception class %r, it will not match", spec)
            self._classes = tuple(found)
        return self._classes

    def serialize(self) -> dict[str, Any]:
        paths = [_dotted_path(s) for s in self._specs]
        data: dict[str, Any] = {"exception": paths if len(paths) > 1 else paths[0],
                                "action": self.action.value,
                                "match_subclasses": self.match_subclasses}
        if self.retry_delay is not None:
            data["retry_delay"] = self.retry_delay.total_seconds()
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RetryRule:
        delay = data.get("retry_delay")
        return cls(exception=data["exception"], action=RetryAction(data["action"]),
                   retry_delay=None if delay is None else timedelta(seconds=delay),
                   reason=data.get("reason"), match_subclasses=data.get("match_subclasses", True))


class ExceptionRetryPolicy(RetryPolicy):
    """Rules tried in order: the first that matches decides; none matching, ``default``."""

    def __init__(self, rules: list[RetryRule], default: RetryAction = RetryAction.DEFAULT) -> None:
        self.rules = list(rules)
        self.default = RetryAction(default)

    def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                 context: Any = None) -> RetryDecision:
        for rule in self.rules:
            if rule.matches(exception):
                return RetryDecision(action=rule.action, retry_delay=rule.retry_delay,
                                     reason=rule.reason
                                     or f"Matched rule for {type(exception).__name__}")
        return RetryDecision(action=self.default)

    def serialize(self) -> dict[str, Any]:
        return {"__type": "ExceptionRetryPolicy", "rules": [r.serialize() for r in self.rules],
                "default": self.default.value}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> ExceptionRetryPolicy:
        return cls(rules=[RetryRule.deserialize(r) for r in data["rules"]],
                   default=RetryAction(data.get("default", "default")))


def check_retry_policy(policy: Any, where: str) -> RetryPolicy | None:
    """A task's ``retry_policy=``: ``None`` or a policy."""
    if policy is None or isinstance(policy, RetryPolicy):
        return policy
    raise DagDefinitionError(f"{where}: retry_policy must be a RetryPolicy, got {policy!r}.")


def policy_report(task: Any, exception: BaseException, context: Any) -> dict[str, Any] | None:
    """Ask the task's policy about ``exception``; the decision as plain data for the worker
    (``None`` without a policy, or when the policy raised or answered something else)."""
    policy = getattr(task, "retry_policy", None)
    if policy is None:
        return None
    ti = context.get("ti") if context is not None else None
    try:
        decision = policy.evaluate(exception=exception,
                                   try_number=int(getattr(ti, "try_number", 1) or 1),
                                   max_tries=int(getattr(ti, "max_tries", 0) or 0),
                                   context=context)
        action = RetryAction(decision.action)
    except Exception:
        log.exception("Retry policy evaluation failed, falling back to default behaviour")
        return None
    delay = decision.retry_delay
    reason = decision.reason[:MAX_REASON_CHARS] if decision.reason else None
    if reason:
        log.info("Retry policy decision: %s (%s)", action.value, reason)
    return {"action": action.value,
            "delay_seconds": None if delay is None else delay.total_seconds(),
            "reason": reason}
