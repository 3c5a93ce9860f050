"""TaskFlow: ``@task`` and its variants ``@task.branch``, ``@task.short_circuit``, ``@task.bash``,
``@task.external_python``, ``@task.virtualenv`` and their ``branch_`` kin; ``@setup`` and
``@teardown``.

Calling a decorated function inside a DAG creates a task and returns its ``XComArg``. XComArgs
among the call's arguments become upstream dependencies and are replaced by the upstream
tasks' return values when the task runs.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.core.trigger_rules import TriggerRule
from statewright.sdk import _dag_context
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.decorators_sensor import DecoratedSensorOperator
from statewright.sdk.operators.bash import BashOperator
from statewright.sdk.operators.python import (
    BranchPythonOperator,
    PythonOperator,
    ShortCircuitOperator,
    determine_kwargs,
)
from statewright.sdk.operators.python_env import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
)
from statewright.sdk.taskgroup import current_task_group, unique_label
from statewright.sdk.xcom_arg import XComArg

__all__ = ["setup", "task", "teardown"]

# Context keys a TaskFlow function may name as parameters without the caller passing them.
KNOWN_CONTEXT_KEYS = frozenset(
    {
        "conf",
        "dag",
        "dag_run",
        "data_interval_end",
        "data_interval_start",
        "ds",
        "ds_nodash",
        "logical_date",
        "map_index",
        "params",
        "run_id",
        "task",
        "task_instance",
        "task_instance_key_str",
        "ti",
        "try_number",
        "ts",
        "ts_nodash",
        "ts_nodash_with_tz",
    }
)


class _PythonDecoratedOperator(PythonOperator):
    custom_operator_name = "@task"


class _BranchPythonDecoratedOperator(BranchPythonOperator):
    custom_operator_name = "@task.branch"


class _ShortCircuitDecoratedOperator(ShortCircuitOperator):
    custom_operator_name = "@task.short_circuit"


class _ExternalPythonDecoratedOperator(ExternalPythonOperator):
    custom_operator_name = "@task.external_python"


class _BranchExternalPythonDecoratedOperator(BranchExternalPythonOperator):
    custom_operator_name = "@task.branch_external_python"


class _PythonVirtualenvDecoratedOperator(PythonVirtualenvOperator):
    custom_operator_name = "@task.virtualenv"


class _BranchPythonVirtualenvDecoratedOperator(BranchPythonVirtualenvOperator):
    custom_operator_name = "@task.branch_virtualenv"


# Decorators whose task's return value is split into keys with a ``-> dict`` annotation.
_INFERS_MULTIPLE_OUTPUTS = (
    _PythonDecoratedOperator, _ExternalPythonDecoratedOperator, _PythonVirtualenvDecoratedOperator)


class _BashDecoratedOperator(BashOperator):
    """Calls the function to get the command, then runs it like BashOperator."""

    custom_operator_name = "@task.bash"
    template_fields: ClassVar[Sequence[str]] = ("op_args", "op_kwargs", "env", "cwd")

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: list[Any] | None = None,
        op_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("multiple_outputs", None)
        super().__init__(bash_command=None, **kwargs)
        self.python_callable = python_callable
        self.op_args = list(op_args or ())
        self.op_kwargs = dict(op_kwargs or {})

    def execute(self, context: Any) -> Any:
        merged = {**context, **self.op_kwargs}
        kwargs = determine_kwargs(self.python_callable, self.op_args, merged)
        command = self.python_callable(*self.op_args, **kwargs)
        if not isinstance(command, str) or not command.strip():
            raise TypeError(
                f"task {self.task_id!r}: the @task.bash function must return a non-empty "
                f"string (the command to run), got {command!r}"
            )
        self.bash_command = command
        return super().execute(context)


class _TaskDecorator:
    """A function wrapped by ``@task``: calling it inside a DAG adds a task."""

    def __init__(
        self,
        function: Callable[..., Any],
        operator_class: type[BaseOperator],
        kwargs: dict[str, Any],
    ) -> None:
        if not callable(function):
            raise DagDefinitionError(f"@task must decorate a function, got {function!r}.")
        self.function = function
        self.operator_class = operator_class
        self.kwargs = kwargs
        # Set by @setup / @teardown (Airflow's _TaskDecorator attributes of the same names).
        self.is_setup = False
        self.is_teardown = False
        self.on_failure_fail_dagrun = False
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> XComArg:
        op_kwargs = dict(self.kwargs)
        dag = op_kwargs.get("dag") or _dag_context.current_dag()
        task_id = op_kwargs.pop("task_id", None) or self.function.__name__
        if dag is not None:
            group = op_kwargs.get("task_group") or current_task_group(dag)
            task_id = unique_label(dag, group, task_id)
        _check_call(self.function, args, kwargs, task_id)
        if "multiple_outputs" not in op_kwargs and self.operator_class in _INFERS_MULTIPLE_OUTPUTS:
            op_kwargs["multiple_outputs"] = _returns_mapping(self.function)
        if "doc_md" not in op_kwargs and self.function.__doc__:
            op_kwargs["doc_md"] = inspect.cleandoc(self.function.__doc__)
        if self.is_teardown:
            if "trigger_rule" in op_kwargs:
                raise DagDefinitionError(
                    f"task {task_id!r}: trigger rule not configurable for teardown tasks (a "
                    f"teardown's rule is {TriggerRule.ALL_DONE_SETUP_SUCCESS.value})."
                )
            op_kwargs["trigger_rule"] = TriggerRule.ALL_DONE_SETUP_SUCCESS
        on_failure_fail_dagrun = op_kwargs.pop("on_failure_fail_dagrun",
                                               self.on_failure_fail_dagrun)
        if on_failure_fail_dagrun is not False and not self.is_teardown:
            # Checked before the task is created, so a failed call leaves the DAG as it was.
            raise DagDefinitionError(
                f"Cannot set task on_failure_fail_dagrun for {task_id!r} because it is not a "
                "teardown task: use @teardown(on_failure_fail_dagrun=True)."
            )
        operator = self.operator_class(
            task_id=task_id,
            python_callable=self.function,
            op_args=list(args),
            op_kwargs=kwargs,
            **op_kwargs,
        )
        operator.is_setup = self.is_setup
        operator.is_teardown = self.is_teardown
        operator.on_failure_fail_dagrun = on_failure_fail_dagrun
        return XComArg(operator)

    # -- mapping (statewright.sdk.mappedoperator) -------------------------------------------------

    def partial(self, **kwargs: Any) -> Any:
        """Fix some of the function's arguments for every mapped instance; then ``.expand()``."""
        from statewright.sdk.mappedoperator import expand_partial_of

        op_kwargs = dict(self.kwargs)
        dag = op_kwargs.get("dag") or _dag_context.current_dag()
        task_id = op_kwargs.pop("task_id", None) or self.function.__name__
        if dag is not None:
            group = op_kwargs.get("task_group") or current_task_group(dag)
            task_id = unique_label(dag, group, task_id)
        return _MappedTaskFlow(expand_partial_of(
            self.operator_class, op_kwargs, self.function, kwargs, task_id))

    def expand(self, **kwargs: Any) -> XComArg:
        """One task instance per item (per combination of items) of ``kwargs``' values."""
        return self.partial().expand(**kwargs)

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> XComArg:
        """One task instance per dict of keyword arguments in ``kwargs``."""
        return self.partial().expand_kwargs(kwargs, strict=strict)

    def override(self, **kwargs: Any) -> _TaskDecorator:
        """The same task with some arguments changed: ``my_task.override(task_id="x")()``."""
        other = _TaskDecorator(self.function, self.operator_class, {**self.kwargs, **kwargs})
        other.is_setup = self.is_setup
        other.is_teardown = self.is_teardown
        other.on_failure_fail_dagrun = self.on_failure_fail_dagrun
        return other


class _MappedTaskFlow:
    """``@task`` function's ``.partial(...)``: ``.expand()`` returns the mapped task's output."""

    def __init__(self, partial: Any) -> None:
        self._partial = partial

    def expand(self, **kwargs: Any) -> XComArg:
        return XComArg(self._partial.expand(**kwargs))

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> XComArg:
        return XComArg(self._partial.expand_kwargs(kwargs, strict=strict))


def _check_call(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], task_id: str
) -> None:
    """Fail at definition time when the call could not bind (context keys may be left out)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError as exc:
        raise DagDefinitionError(f"task {task_id!r}: {exc}") from None
    missing = [
        name
        for name, p in signature.parameters.items()
        if name not in bound.arguments
        and p.default is p.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and name not in KNOWN_CONTEXT_KEYS
    ]
    if missing:
        raise DagDefinitionError(
            f"task {task_id!r}: missing argument(s) {', '.join(map(repr, missing))} in the call "
            f"to {function.__name__}()."
        )


def _returns_mapping(function: Callable[..., Any]) -> bool:
    """Airflow infers ``multiple_outputs`` from a ``-> dict[...]`` return annotation."""
    try:
        hint = typing.get_type_hints(function).get("return")
    except Exception:
        return False
    origin = typing.get_origin(hint) or hint
    return isinstance(origin, type) and issubclass(origin, collections.abc.Mapping)


class _TaskDecoratorFactory:
    """``task``: ``@task``, ``@task(...)``, ``.branch``, ``.short_circuit``, ``.bash``,
    ``.sensor``, ``.external_python``, ``.virtualenv``, ``.branch_external_python``,
    ``.branch_virtualenv``."""

    def _make(
        self,
        operator_class: type[BaseOperator],
        python_callable: Callable[..., Any] | None,
        kwargs: dict[str, Any],
    ) -> Any:
        if python_callable is not None:
            return _TaskDecorator(python_callable, operator_class, kwargs)
        return lambda function: _TaskDecorator(function, operator_class, kwargs)

    def __call__(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        return self._make(_PythonDecoratedOperator, python_callable, kwargs)

    def python(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        return self._make(_PythonDecoratedOperator, python_callable, kwargs)

    def branch(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        return self._make(_BranchPythonDecoratedOperator, python_callable, kwargs)

    def short_circuit(
        self, python_callable: Callable[..., Any] | None = None, **kwargs: Any
    ) -> Any:
        return self._make(_ShortCircuitDecoratedOperator, python_callable, kwargs)

    def bash(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        return self._make(_BashDecoratedOperator, python_callable, kwargs)

    def sensor(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        """``@task.sensor(poke_interval=..., timeout=..., mode=...)``: poke with the function."""
        return self._make(DecoratedSensorOperator, python_callable, kwargs)

    def external_python(
        self, python_callable: Callable[..., Any] | None = None, **kwargs: Any
    ) -> Any:
        """``@task.external_python(python="/path/bin/python")``: ExternalPythonOperator."""
        return self._make(_ExternalPythonDecoratedOperator, python_callable, kwargs)

    def branch_external_python(
        self, python_callable: Callable[..., Any] | None = None, **kwargs: Any
    ) -> Any:
        """``@task.branch_external_python(python=...)``: BranchExternalPythonOperator."""
        return self._make(_BranchExternalPythonDecoratedOperator, python_callable, kwargs)

    def virtualenv(self, python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        """``@task.virtualenv(requirements=[...], ...)``: PythonVirtualenvOperator."""
        return self._make(_PythonVirtualenvDecoratedOperator, python_callable, kwargs)

    def branch_virtualenv(
        self, python_callable: Callable[..., Any] | None = None, **kwargs: Any
    ) -> Any:
        """``@task.branch_virtualenv(requirements=[...], ...)``: BranchPythonVirtualenvOperator."""
        return self._make(_BranchPythonVirtualenvDecoratedOperator, python_callable, kwargs)


task = _TaskDecoratorFactory()


def _as_task_decorator(function: Any, which: str, other: str) -> _TaskDecorator:
    """``function`` as a ``@task`` to mark ``which`` (setup / teardown); it may not already be
    marked ``other``."""
    if isinstance(function, _TaskDecorator):
        decorated = function
    elif inspect.isfunction(function):
        decorated = task(function)
    else:
        raise DagDefinitionError(
            f"@{which} must decorate a function or a @task function, got {function!r}.")
    if getattr(decorated, f"is_{other}"):
        raise DagDefinitionError(
            f"Cannot mark task {decorated.function.__name__!r} as {which}; task is already a "
            f"{other}.")
    return decorated


def setup(python_callable: Callable[..., Any]) -> _TaskDecorator:
    """Mark a TaskFlow function as a setup task (Airflow's ``@setup``).

    Put it over a plain function (it becomes a ``@task``) or over a ``@task(...)`` one::

        @setup
        def create_cluster(): ...
    """
    decorated = _as_task_decorator(python_callable, "setup", "teardown")
    decorated.is_setup = True
    return decorated


def teardown(
    python_callable: Callable[..., Any] | None = None, *, on_failure_fail_dagrun: bool = False
) -> Any:
    """Mark a TaskFlow function as a teardown task (Airflow's ``@teardown``).

    Its trigger rule is ``all_done_setup_success`` (it may not be given another one); with
    ``on_failure_fail_dagrun=True`` its failure fails the run::

        @teardown
        def delete_cluster(): ...
    """
    if not isinstance(on_failure_fail_dagrun, bool):
        raise DagDefinitionError(
            f"@teardown: on_failure_fail_dagrun must be True or False, got "
            f"{on_failure_fail_dagrun!r}."
        )

    def mark(function: Callable[..., Any]) -> _TaskDecorator:
        decorated = _as_task_decorator(function, "teardown", "setup")
        decorated.is_teardown = True
        decorated.on_failure_fail_dagrun = on_failure_fail_dagrun
        return decorated

    if python_callable is None:
        return mark
    return mark(python_callable)
