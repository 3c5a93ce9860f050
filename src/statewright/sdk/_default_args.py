"""Operator arguments a task leaves unset, taken from ``default_args``: the wrapper every
operator class's ``__init__`` gets (as in Airflow, for every class in the hierarchy), and the
task group a new task joins."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk.taskgroup import TaskGroup, current_task_group

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator

_NEVER_DEFAULTED = frozenset({"self", "task_id", "dag", "default_args", "task_group"})


def _task_group_for(kwargs: dict[str, Any], *, accepted: bool) -> TaskGroup | None:
    """The group a new task joins: ``task_group=``, else the innermost open ``with TaskGroup``
    block (of the task's DAG); the DAG comes from the group when not given."""
    if not accepted:
        return None
    group = kwargs.get("task_group") or current_task_group(kwargs.get("dag"))
    if group is not None and not isinstance(group, TaskGroup):
        raise DagDefinitionError(
            f"task {kwargs.get('task_id')!r}: task_group= must be a TaskGroup, got {group!r}.")
    if group is not None:
        kwargs["task_group"] = group
        if kwargs.get("dag") is None and group.dag is not None:
            kwargs["dag"] = group.dag
    return group


def _apply_defaults(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap an operator ``__init__`` so unset arguments come from ``default_args``."""
    sig = inspect.signature(init)
    params = list(sig.parameters.values())[1:]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    accepted = frozenset(names)
    required = frozenset(p.name for p in params if p.default is p.empty
                         and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    @functools.wraps(init)
    def apply_defaults(self: BaseOperator, *args: Any, **kwargs: Any) -> None:
        outermost = not self.__dict__.get("_init_running", False)
        if outermost:
            self.__dict__["_init_running"] = True
            self.__dict__["defined_at"] = _dag_context.caller_location()
        try:
            if ("dag" in names or takes_var_kw) and kwargs.get("dag") is None:
                active = _dag_context.current_dag()
                if active is not None:
                    kwargs["dag"] = active
            group = _task_group_for(kwargs, accepted="task_group" in names or takes_var_kw)
            defaults: dict[str, Any] = {}
            dag = kwargs.get("dag")
            if dag is not None:
                defaults.update(getattr(dag, "default_args", None) or {})
            if group is not None:
                defaults.update(group.default_args)
            defaults.update(kwargs.get("default_args") or {})
            filled = set(positional[: len(args)])
            for name in names:
                if name in _NEVER_DEFAULTED or name in kwargs or name in filled:
                    continue
                if name in defaults:
                    kwargs[name] = defaults[name]
            try:
                # Keyword arguments that all fit need no binding (the common case, and
                # binding costs more than the rest of an operator's construction).
                if args or not (required <= kwargs.keys() and (
                        takes_var_kw or kwargs.keys() <= accepted)):
                    sig.bind(self, *args, **kwargs)
            except TypeError as exc:
                task_id = kwargs.get("task_id", args[0] if args else "?")
                raise DagDefinitionError(
                    f"{type(self).__name__}(task_id={task_id!r}): {exc}"
                ) from None
            init(self, *args, **kwargs)
            if outermost:
                self._finish_init()
        finally:
            if outermost:
                self.__dict__["_init_running"] = False

    apply_defaults._applies_defaults = True  # type: ignore[attr-defined]
    return apply_defaults
