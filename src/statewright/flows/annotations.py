"""``allow_failure`` and ``quote``: Prefect's argument annotations.

``allow_failure(upstream)`` in a task call's arguments or in its ``wait_for`` lets the call
run when the upstream task run did not complete: the argument is the upstream's exception (its
state's ``result(raise_on_failure=False)``), as in Prefect. ``quote(value)`` passes a value
as it is, futures and states inside it left unresolved.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["BaseAnnotation", "allow_failure", "quote", "unmapped"]


class BaseAnnotation(Generic[T]):
    def __init__(self, value: T) -> None:
        self.value = value

    def unwrap(self) -> T:
        return self.value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BaseAnnotation) and type(self) is type(other) \
            and bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash((type(self), id(self.value)))


class allow_failure(BaseAnnotation[T]):
    """Run the downstream call even when this upstream did not complete."""


class quote(BaseAnnotation[T]):
    """Give the value to the task as it is (no futures resolved inside it)."""


def unmapped(value: Any) -> Any:
    from statewright.flows.engine import unmapped as _unmapped

    return _unmapped(value)
