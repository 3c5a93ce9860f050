"""Mapped tasks: ``Operator.partial(**fixed).expand(**mapped)`` and ``.expand_kwargs(...)``.

A ``MappedOperator`` is one task of the DAG (one node of the graph, one task id) that the
scheduler expands into ``n`` task instances once what it maps over is known. It carries the
operator class, the arguments fixed by ``partial()`` and an expand input
(:mod:`statewright.sdk.expandinput`). When one of its task instances runs, ``unmap`` builds the
real operator from the fixed arguments and that instance's mapped ones.

The arguments the scheduler reads (trigger rule, retries, pool, queue, …) are fixed for every
instance: they go to ``partial()`` and cannot be mapped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.expandinput import DictOfListsExpandInput, ListOfDictsExpandInput
from statewright.sdk.xcom_arg import resolve_references

__all__ = ["MappedOperator", "OperatorPartial", "mappable_names"]

ExpandInput = DictOfListsExpandInput | ListOfDictsExpandInput

_BASE_ARGS = frozenset(inspect.signature(BaseOperator.__init__).parameters) - {"self", "kwargs"}
NON_MAPPABLE = _BASE_ARGS
"""Arguments every instance shares (the scheduler reads them): given to partial() only."""


def mappable_names(operator_class: type[BaseOperator]) -> frozenset[str]:
    """The arguments an operator class's ``__init__`` chain takes besides BaseOperator's."""
    names: set[str] = set()
    for klass in operator_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is BaseOperator or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                names.add(p.name)
    return frozenset(names - _BASE_ARGS)


def _required_names(operator_class: type[BaseOperator]) -> set[str]:
    init = operator_class.__init__
    return {p.name for p in inspect.signature(init).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
            and p.name not in ("self", "task_id")}


class OperatorPartial:
    """``SomeOperator.partial(task_id=..., **fixed)``: waits for ``.expand()`` or
    ``.expand_kwargs()``."""

    def __init__(
        self,
        operator_class: type[BaseOperator],
        kwargs: Mapping[str, Any],
        *,
        mapped_field: str | None = None,
        function: Callable[..., Any] | None = None,
    ) -> None:
        self.operator_class = operator_class
        self.kwargs = dict(kwargs)
        self.mapped_field = mapped_field
        self.function = function
        task_id = self.kwargs.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise DagDefinitionError(
                f"{operator_class.__name__}.partial() needs a task_id (a non-empty string), "
                f"got {task_id!r}.")
        self._where = f"task {task_id!r}"
        if function is None:
            own = mappable_names(operator_class)
            unknown = sorted(set(self.kwargs) - own - _BASE_ARGS)
            if unknown:
                raise DagDefinitionError(
                    f"{self._where}: {operator_class.__name__}.partial() got unexpected "
                    f"argument(s) {', '.join(map(repr, unknown))}.")
        self._used = False

    def expand(self, **mapped: Any) -> MappedOperator:
        """One task instance per combination of the items of ``mapped``'s values."""
        self._check_names(mapped, "expand")
        return self._create(DictOfListsExpandInput(mapped, self._where))

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> MappedOperator:
        """One task instance per dict of keyword arguments in ``kwargs`` (a list, or the output
        of a task returning a list of dicts)."""
        expand_input = ListOfDictsExpandInput(kwargs, self._where)
        self._check_names({n: None for n in expand_input.names()}, "expand_kwargs")
        return self._create(expand_input)

    def _check_names(self, mapped: Mapping[str, Any], how: str) -> None:
        fixed = self._fixed_names()
        for name in mapped:
            if name in NON_MAPPABLE and name not in self._accepted_names():
                raise DagDefinitionError(
                    f"{self._where}: {how}() cannot map argument {name!r}: every instance of a "
                    f"mapped task shares it, so pass it to partial() instead.")
            if name not in self._accepted_names() and not self._takes_any():
                raise DagDefinitionError(
                    f"{self._where}: {how}() got an unexpected keyword argument {name!r}; "
                    f"{self._callable_name()} takes "
                    f"{', '.join(sorted(self._accepted_names())) or 'no arguments'}.")
            if name in fixed:
                raise DagDefinitionError(
                    f"{self._where}: argument {name!r} is given to both partial() and {how}(); "
                    "give it to one of them.")

    def _fixed_names(self) -> set[str]:
        if self.mapped_field is None:
            return set(self.kwargs)
        return set(self.kwargs.get(self.mapped_field) or {})

    def _accepted_names(self) -> frozenset[str]:
        if self.function is not None:
            params = inspect.signature(self.function).parameters.values()
            return frozenset(p.name for p in params
                             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        return mappable_names(self.operator_class)

    def _takes_any(self) -> bool:
        if self.function is None:
            return False
        return any(p.kind is p.VAR_KEYWORD
                   for p in inspect.signature(self.function).parameters.values())

    def _callable_name(self) -> str:
        if self.function is not None:
            return f"function {self.function.__name__}()"
        return self.operator_class.__name__

    def _create(self, expand_input: ExpandInput) -> MappedOperator:
        if self._used:
            raise DagDefinitionError(f"{self._where}: this partial() was expanded already.")
        self._used = True
        if self.function is None and isinstance(expand_input, DictOfListsExpandInput):
            missing = _required_names(self.operator_class) - set(self.kwargs) - set(
                expand_input.value)
            if missing:
                raise DagDefinitionError(
                    f"{self._where}: {self.operator_class.__name__} needs argument(s) "
                    f"{', '.join(map(repr, sorted(missing)))}: give them to partial() or "
                    "expand().")
        kwargs = dict(self.kwargs)
        base = {k: kwargs.pop(k) for k in list(kwargs) if k in _BASE_ARGS}
        return MappedOperator(
            operator_class=self.operator_class, partial_kwargs=kwargs, expand_input=expand_input,
            mapped_field=self.mapped_field, **base)


class MappedOperator(BaseOperator):
    """A task expanded at run time into one task instance per item it maps over."""

    is_mapped = True
    template_fields = ("_expand_value", "partial_kwargs")

    def __init__(
        self,
        task_id: str,
        *,
        operator_class: type[BaseOperator],
        partial_kwargs: dict[str, Any],
        expand_input: ExpandInput,
        mapped_field: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(task_id, **kwargs)
        self.operator_class = operator_class
        self.partial_kwargs = partial_kwargs
        self.expand_input = expand_input
        self._expand_value = expand_input.value
        self.mapped_field = mapped_field
        self.is_sensor = bool(getattr(operator_class, "is_sensor", False))  # type: ignore[misc]
        self.deferrable = bool(partial_kwargs.get("deferrable",
                                                  getattr(operator_class, "deferrable", False)))
        self.task_base_kwargs = dict(kwargs, task_id=task_id)

    @property
    def task_type(self) -> str:
        return getattr(self.operator_class, "custom_operator_name", None) or \
            self.operator_class.__name__

    def __repr__(self) -> str:
        return f"<Mapped({self.task_type}): {self.__dict__.get('task_id', '?')}>"

    def execute(self, context: Any) -> Any:
        raise RuntimeError(
            f"mapped task {self.task_id!r} runs one instance at a time: unmap(context) first")

    def serialize_expand_input(self) -> dict[str, Any]:
        return self.expand_input.serialize()

    def unmap(self, context: Mapping[str, Any]) -> BaseOperator:
        """The operator one task instance runs: the fixed arguments and this instance's mapped
        ones (``context["ti"].map_index``), every upstream output resolved."""
        ti = context["ti"]
        mapped = self.expand_input.resolve(context, ti.map_index)
        kwargs = dict(self.partial_kwargs)
        if self.mapped_field is not None:
            kwargs[self.mapped_field] = {**(kwargs.get(self.mapped_field) or {}), **mapped}
        else:
            kwargs.update(mapped)
        kwargs = resolve_references(kwargs, context)
        base = dict(self.task_base_kwargs)
        base.pop("dag", None)
        group = base.pop("task_group", None)  # the mapped task is the group's member, not this one
        dag = self.dag
        base["default_args"] = {**(getattr(dag, "default_args", None) or {}),
                                **(base.get("default_args") or {})}
        with _dag_context.no_active_dag():
            op = self.operator_class(**base, **kwargs)
        op.__dict__["_dag"] = dag
        op.task_id = self.task_id  # its full id, with the prefix of the group it is in
        op.task_group = group
        op.upstream_task_ids = set(self.upstream_task_ids)
        op.downstream_task_ids = set(self.downstream_task_ids)
        return op


def expand_partial_of(operator_class: type[BaseOperator],
                      operator_kwargs: Mapping[str, Any], function: Callable[..., Any],
                      fixed: Mapping[str, Any], task_id: str) -> OperatorPartial:
    """The ``OperatorPartial`` of a ``@task`` function: ``fixed`` are function arguments."""
    return OperatorPartial(
        operator_class,
        {**operator_kwargs, "task_id": task_id, "python_callable": function,
         "op_kwargs": dict(fixed)},
        mapped_field="op_kwargs", function=function)
