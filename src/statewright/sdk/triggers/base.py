"""The trigger contract: ``BaseTrigger``, ``TriggerEvent`` and rebuilding a trigger by classpath.

A trigger lives in two places. A task builds it and defers on it; the task runner stores its
``serialize()`` result (classpath and kwargs, encrypted). The triggerer later rebuilds it with
:func:`import_trigger` and runs ``run()`` in its event loop until the first event.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import AsyncIterator
from typing import Any

from statewright.core.errors import StatewrightError
from statewright.sdk import serde

__all__ = [
    "BaseTrigger",
    "TriggerEvent",
    "TriggerImportError",
    "classpath_of",
    "import_trigger",
]


class TriggerImportError(StatewrightError):
    """A stored trigger whose class cannot be imported or built from its kwargs."""


class TriggerEvent:
    """What a trigger yields when its condition is met; ``payload`` goes to the resumed task.

    The payload must be serializable by :mod:`statewright.sdk.serde` (plain data, datetimes,
    timedeltas); this is checked when the event is made, so a bad payload fails inside the
    trigger that produced it.
    """

    __slots__ = ("payload",)

    def __init__(self, payload: Any = None) -> None:
        serde.serialize(payload, path="TriggerEvent.payload")
        self.payload = payload

    def to_data(self) -> Any:
        """The payload as JSON-compatible data (for storage)."""
        return serde.serialize(self.payload, path="TriggerEvent.payload")

    @classmethod
    def from_data(cls, data: Any) -> TriggerEvent:
        """Rebuild an event from :meth:`to_data` output."""
        return cls(serde.deserialize(data, path="TriggerEvent.payload"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TriggerEvent):
            return NotImplemented
        return bool(self.payload == other.payload)

    __hash__ = None  # type: ignore[assignment]  # payloads may be unhashable

    def __repr__(self) -> str:
        return f"TriggerEvent<{self.payload!r}>"


class BaseTrigger(abc.ABC):
    """Base class of every trigger.

    Subclasses keep their constructor arguments as attributes, return them from
    :meth:`serialize`, and implement :meth:`run` as an async generator that yields one
    :class:`TriggerEvent` when the condition is met. ``run`` must never block the event loop:
    use ``await`` for waiting and ``asyncio.to_thread`` for blocking calls.
    """

    # A subclass that declares ``__slots__`` of its own holds no per-instance dict: a
    # triggerer may hold 100,000 triggers. (Without ``__slots__``, it has one, as usual.)
    __slots__ = ("__weakref__", "trigger_id")

    #: When true, the triggerer ends the task successfully with the event instead of
    #: resuming it on a worker.
    end_from_trigger: bool = False

    def __init__(self, **kwargs: Any) -> None:
        #: The id of the stored trigger row; set by the triggerer before ``run``.
        self.trigger_id: int | None = None

    @abc.abstractmethod
    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Return ``(classpath, kwargs)`` such that ``import_trigger(*result)`` rebuilds self."""

    @abc.abstractmethod
    def run(self) -> AsyncIterator[TriggerEvent]:
        """Wait for the condition and yield a :class:`TriggerEvent` (an async generator)."""

    async def cleanup(self) -> None:  # noqa: B027 - optional hook, empty by default
        """Release resources; called when the trigger stops, whether it fired or not."""

    def __repr__(self) -> str:
        try:
            classpath, kwargs = self.serialize()
        except Exception:  # a half-built trigger still gets a repr
            return f"<{type(self).__qualname__}>"
        args = ", ".join(f"{name}={value!r}" for name, value in kwargs.items())
        return f"<{classpath.rsplit('.', 1)[-1]} {args}>"


def classpath_of(obj: object) -> str:
    """The dotted import path of ``obj``'s class (or of ``obj`` itself if it is a class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def import_trigger(classpath: str, kwargs: dict[str, Any]) -> BaseTrigger:
    """Import the trigger class at ``classpath`` and build it with ``kwargs``.

    Raises :class:`TriggerImportError` naming the classpath when the class cannot be found,
    is not a trigger, or does not accept the kwargs.
    """
    cls = _import_class(classpath)
    if not (isinstance(cls, type) and issubclass(cls, BaseTrigger)):
        raise TriggerImportError(
            f"Trigger class {classpath!r} is {cls!r}, not a subclass of "
            "statewright.sdk.triggers.BaseTrigger."
        )
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise TriggerImportError(
            f"Trigger class {classpath!r} cannot be built from its stored kwargs "
            f"{sorted(kwargs)}: {exc}. Was the class changed since the trigger was stored?"
        ) from exc


def _import_class(classpath: str) -> object:
    parts = classpath.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise TriggerImportError(
            f"Trigger classpath {classpath!r} is not a dotted path like 'package.module.Class'."
        )
    # Find the longest importable module prefix, so nested classes (Outer.Inner) work too.
    not_found: ModuleNotFoundError | None = None
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if module_name == missing or module_name.startswith(missing + "."):
                not_found = not_found or exc
                continue  # this prefix is not a module; try a shorter one
            raise _import_error(classpath, exc) from exc
        except Exception as exc:  # the module exists but failed while importing
            raise _import_error(classpath, exc) from exc
        target: object = module
        try:
            for name in parts[split:]:
                target = getattr(target, name)
        except AttributeError as exc:
            raise _import_error(classpath, exc) from exc
        return target
    assert not_found is not None
    raise _import_error(classpath, not_found) from not_found


def _import_error(classpath: str, exc: BaseException) -> TriggerImportError:
    return TriggerImportError(
        f"Trigger class {classpath!r} cannot be imported: {type(exc).__name__}: {exc}. "
        "Is the package that defines it installed where the triggerer runs?"
    )
