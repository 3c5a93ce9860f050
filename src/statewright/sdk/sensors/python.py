"""``PythonSensor``: wait until a Python callable returns a true value."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.sensors.base import BaseSensor, PokeReturnValue

__all__ = ["PythonSensor"]


class PythonSensor(BaseSensor):
    """Poke by calling ``python_callable(*op_args, **op_kwargs)`` (plus the context keys it
    names); a true value, or a done ``PokeReturnValue``, ends the wait."""

    template_fields = ("op_args", "op_kwargs")

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Sequence[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not callable(python_callable):
            raise DagDefinitionError(
                f"sensor {self.task_id!r}: python_callable must be callable, "
                f"got {python_callable!r}.")
        self.python_callable = python_callable
        self.op_args = list(op_args or ())
        self.op_kwargs = dict(op_kwargs or {})

    def poke(self, context: Any) -> bool | PokeReturnValue:
        merged = {**context, **self.op_kwargs}
        kwargs = determine_kwargs(self.python_callable, self.op_args, merged)
        result = self.python_callable(*self.op_args, **kwargs)
        if isinstance(result, PokeReturnValue):
            return result
        return bool(result)
