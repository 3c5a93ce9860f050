"""Mapped task groups: ``@task_group`` functions with ``.partial(**fixed).expand(**mapped)`` or
``.expand_kwargs(...)`` (Airflow's ``MappedTaskGroup``).

The group's expand input (:mod:`statewright.sdk.expandinput`) is attached to every task created
inside the group, so each task counts the same length and runs instance ``i`` with the ``i``-th
item. The function's mapped parameters receive ``MappedArgument`` references, resolved per map
index when a task instance runs. Instance ``i`` of a task in the group depends only on instance
``i`` of its upstream in the same group (the scheduler's ``RunNodes.upstream``); a task outside
the group sees every instance.

Refused with a clear error: a task inside a mapped group that is itself ``.expand()``-ed, a mapped
group nested in another mapped group, and a branch or short-circuit task inside a mapped group
(its skips would have to apply to one map index only).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.expandinput import DictOfListsExpandInput, ListOfDictsExpandInput
from statewright.sdk.taskgroup import TaskGroup, mapped_group_of
from statewright.sdk.xcom_arg import XComArg

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator

__all__ = ["MappedArgument", "MappedTaskGroup", "TaskGroupPartial", "mapped_group_of"]

ExpandInput = DictOfListsExpandInput | ListOfDictsExpandInput


class MappedTaskGroup(TaskGroup):
    """A task group whose every task is mapped by one expand input."""

    is_mapped = True

    def __init__(self, group_id: str, *, expand_input: ExpandInput, **kwargs: Any) -> None:
        self.expand_input = expand_input
        super().__init__(group_id, **kwargs)
        outer = self.parent_group and mapped_group_of(self.parent_group)
        if outer is not None:
            raise DagDefinitionError(
                f"task group {self.group_id!r} is mapped inside mapped task group "
                f"{outer.group_id!r}; nested mapped task groups are not supported: map one of "
                "them only.")

    def __repr__(self) -> str:
        return f"<MappedTaskGroup: {self.group_id}>"

    def adopt(self, task: BaseOperator) -> None:
        """Map ``task`` (created inside this group) by the group's expand input."""
        if task.is_mapped:
            raise DagDefinitionError(
                f"task {task.task_id!r} is expanded inside mapped task group "
                f"{self.group_id!r}; a task in a mapped group is already mapped by the group, "
                "so nested mapping is not supported: pass the values to the group's expand() "
                "instead.")
        from statewright.sdk.branch import SkipMixin

        if isinstance(task, SkipMixin):
            raise DagDefinitionError(
                f"task {task.task_id!r} skips downstream tasks (a branch or short-circuit) "
                f"inside mapped task group {self.group_id!r}; skipping per map index is not "
                "supported yet: branch before the group, or map the tasks one by one.")
        task.__dict__["is_mapped"] = True
        task.__dict__["expand_input"] = self.expand_input
        task.__dict__["mapped_task_group"] = self

    def link_references(self) -> None:
        """Every task of the group reads the expand input, so each one depends directly on the
        tasks whose output the group maps over."""
        producers = [op for ref in self.expand_input.iter_references() for op in ref.leaves]
        for task in self.iter_tasks():
            for op in producers:
                if op.task_id not in task.upstream_task_ids:
                    task.set_upstream(op)


class MappedArgument(XComArg):
    """A parameter of a mapped ``@task_group`` function: the item of the group's expand input
    at the running task instance's map index (the whole dict for ``expand_kwargs``' ``key``
    ``None``)."""

    def __init__(self, expand_input: ExpandInput, name: str) -> None:
        self.expand_input = expand_input
        self.name = name
        self.key = None
        refs = [op for ref in expand_input.iter_references() for op in ref.leaves]
        self.__dict__["operator"] = refs[0] if refs else None

    def __repr__(self) -> str:
        return f"MappedArgument({self.name!r})"

    def __getitem__(self, key: str) -> XComArg:
        raise TypeError(f"{self!r} cannot be indexed; index the value inside the consuming task")

    def map(self, f: Any) -> XComArg:
        raise DagDefinitionError(f"{self!r}: .map() of a mapped group's argument is not "
                                 "supported; transform the value inside the consuming task")

    def zip(self, *others: Any, fillvalue: Any = None) -> XComArg:
        raise DagDefinitionError(f"{self!r}: .zip() of a mapped group's argument is not "
                                 "supported")

    def concat(self, *others: Any) -> XComArg:
        raise DagDefinitionError(f"{self!r}: .concat() of a mapped group's argument is not "
                                 "supported")

    @property
    def roots(self) -> list[BaseOperator]:
        return [op for ref in self.expand_input.iter_references() for op in ref.roots]

    @property
    def leaves(self) -> list[BaseOperator]:
        return [op for ref in self.expand_input.iter_references() for op in ref.leaves]

    def resolve(self, context: Mapping[str, Any]) -> Any:
        values = self.expand_input.resolve(context, context["ti"].map_index)
        if self.name not in values:
            raise KeyError(
                f"mapped task group argument {self.name!r} has no value at map index "
                f"{context['ti'].map_index} (its keyword arguments: {sorted(values)})")
        return values[self.name]


class TaskGroupPartial:
    """``@task_group`` function ``.partial(**fixed)``: waits for ``.expand()`` or
    ``.expand_kwargs()``."""

    def __init__(self, factory: Any, fixed: Mapping[str, Any]) -> None:
        self.factory = factory
        self.fixed = dict(fixed)
        self.function: Callable[..., Any] = factory.function
        self.group_id: str = factory.kwargs.get("group_id") or self.function.__name__
        self._where = f"task group {self.group_id!r}"
        self._params = inspect.signature(self.function).parameters
        unknown = [n for n in self.fixed if n not in self._params and not self._takes_any()]
        if unknown:
            raise DagDefinitionError(
                f"{self._where}: partial() got unexpected argument(s) "
                f"{', '.join(map(repr, unknown))}; the function takes {self._names()}.")

    def _takes_any(self) -> bool:
        return any(p.kind is p.VAR_KEYWORD for p in self._params.values())

    def _names(self) -> str:
        return ", ".join(self._params) or "no arguments"

    def expand(self, **mapped: Any) -> Any:
        """One instance of every task of the group per item of ``mapped``'s values."""
        for name in mapped:
            if name in self.fixed:
                raise DagDefinitionError(
                    f"{self._where}: argument {name!r} is given to both partial() and "
                    "expand(); give it to one of them.")
            if name not in self._params and not self._takes_any():
                raise DagDefinitionError(
                    f"{self._where}: expand() got an unexpected keyword argument {name!r}; "
                    f"the function takes {self._names()}.")
        expand_input = DictOfListsExpandInput(mapped, self._where)
        return self._create(expand_input, list(mapped))

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> Any:
        """One instance of every task of the group per dict of keyword arguments."""
        expand_input = ListOfDictsExpandInput(kwargs, self._where)
        for name in expand_input.names():
            if name not in self._params and not self._takes_any():
                raise DagDefinitionError(
                    f"{self._where}: expand_kwargs() got an unexpected keyword argument "
                    f"{name!r}; the function takes {self._names()}.")
        names = [n for n, p in self._params.items()
                 if n not in self.fixed and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        return self._create(expand_input, names)

    def _create(self, expand_input: ExpandInput, names: list[str]) -> Any:
        args = {**self.fixed, **{n: MappedArgument(expand_input, n) for n in names}}
        return self.factory.build(args, expand_input)
