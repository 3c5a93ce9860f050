"""PythonOperator, BranchPythonOperator and ShortCircuitOperator."""

from __future__ import annotations

import asyncio
import inspect
import logging
import types
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.core.trigger_rules import reached_by_short_circuit
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.branch import BaseBranchOperator, SkipMixin

log = logging.getLogger("statewright.task")


def determine_kwargs(
    function: Callable[..., Any], args: Sequence[Any], context: Mapping[str, Any]
) -> dict[str, Any]:
    """The keyword arguments Airflow passes a callable: the context keys its signature names.

    ``context`` already holds the task's own keyword arguments (they win over context keys). A
    callable with ``**kwargs`` receives everything.
    """
    try:
        parameters = _parameters(function)
    except (TypeError, ValueError):  # some builtins have no signature: give them nothing extra
        return {}
    for name in list(parameters)[: len(args)]:
        if name in context:
            raise ValueError(
                f"the argument {name!r} of {getattr(function, '__name__', function)!r} is given "
                "positionally but is also a context key or keyword argument; pass it by keyword"
            )
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(context)
    return {
        name: context[name]
        for name, p in parameters.items()
        if name in context and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


_SIGNATURES: weakref.WeakKeyDictionary[Any, Mapping[str, inspect.Parameter]] = (
    weakref.WeakKeyDictionary())


def _parameters(function: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    """``inspect.signature(function).parameters``, kept per plain function (a task process
    calls the same callables try after try; reading a signature is a good part of a no-op
    try's cost)."""
    if not isinstance(function, types.FunctionType):
        return inspect.signature(function).parameters
    found = _SIGNATURES.get(function)
    if found is None:
        found = _SIGNATURES[function] = inspect.signature(function).parameters
    return found


class PythonOperator(BaseOperator):
    """Call ``python_callable(*op_args, **op_kwargs)``, plus the context keys it asks for.

    ``templates_dict`` (a template field, as ``op_args`` and ``op_kwargs``) reaches the callable
    rendered, as the context key ``templates_dict``; ``templates_exts`` names the endings of its
    values that are template files (Airflow's).
    """

    template_fields: ClassVar[Sequence[str]] = ("templates_dict", "op_args", "op_kwargs")

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Sequence[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        show_return_value_in_logs: bool = True,
        templates_dict: Mapping[str, Any] | None = None,
        templates_exts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not callable(python_callable):
            raise DagDefinitionError(
                f"task {self.task_id!r}: python_callable must be callable, got {python_callable!r}."
            )
        self.python_callable = python_callable
        self.op_args = list(op_args or ())
        self.op_kwargs = dict(op_kwargs or {})
        self.show_return_value_in_logs = show_return_value_in_logs
        self.templates_dict = dict(templates_dict) if templates_dict is not None else None
        if templates_exts:
            self.template_ext = tuple(templates_exts)

    def execute(self, context: Any) -> Any:
        result = self.execute_callable(context)
        if self.show_return_value_in_logs:
            log.info("Done. Returned value was: %r", result)
        return result

    def execute_callable(self, context: Mapping[str, Any]) -> Any:
        merged = {**context, "templates_dict": self.templates_dict, **self.op_kwargs}
        kwargs = determine_kwargs(self.python_callable, self.op_args, merged)
        result = self.python_callable(*self.op_args, **kwargs)
        if inspect.iscoroutine(result):  # an ``async def`` task: run it to its end here
            return asyncio.run(result)
        return result


class BranchPythonOperator(BaseBranchOperator, PythonOperator):
    """The callable returns the task id(s) to follow; other direct downstream tasks are skipped."""

    def choose_branch(self, context: Any) -> Any:
        return PythonOperator.execute(self, context)


class ShortCircuitOperator(PythonOperator, SkipMixin):
    """Continue only when the callable returns a truthy value.

    On a falsy result, with ``ignore_downstream_trigger_rules=True`` (the default) every task
    downstream (recursively) is skipped; with ``False`` only the direct downstream tasks are, and
    the tasks after them follow their own trigger rules. Teardown tasks and tasks with the
    ``always`` rule are never skipped by it. The result is stored either way.
    """

    def __init__(self, *, ignore_downstream_trigger_rules: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ignore_downstream_trigger_rules = ignore_downstream_trigger_rules

    def execute(self, context: Any) -> Any:
        condition = super().execute(context)
        if condition:
            log.info("Condition result is %r: proceeding with downstream tasks.", condition)
            return condition
        dag = self._require_dag()
        if self.ignore_downstream_trigger_rules:
            candidates = self.get_flat_relative_ids(upstream=False)
        else:
            candidates = self.get_direct_relative_ids(upstream=False)
        to_skip = {
            task_id for task_id in candidates
            if reached_by_short_circuit(dag.task_dict[task_id].trigger_rule,
                                        is_teardown=dag.task_dict[task_id].is_teardown)
        }
        log.info("Condition result is %r: skipping %s.", condition, sorted(to_skip) or "nothing")
        self.skip(context["ti"], sorted(to_skip))
        return condition
