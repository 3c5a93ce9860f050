"""Task groups: ``TaskGroup`` (a context manager) and the ``@task_group`` decorator.

As in Airflow 3, a group is a named set of tasks (and of nested groups) inside one DAG:

- a task created inside ``with TaskGroup("g"):`` gets the id ``g.<task_id>`` (unless the group
  has ``prefix_group_id=False``); a nested group's id is prefixed by its parent's the same way;
- ``default_args`` of a group are merged over its parent's (and over the DAG's) for the tasks
  created inside it;
- a group stands on either side of ``>>``: its *roots* (tasks with no upstream inside the group)
  and *leaves* (tasks with no downstream inside the group) take the edges;
- ``@task_group`` turns a function into a group factory: each call creates a group, named after
  the function and made unique with ``__1``, ``__2``... when called again; its ``.expand()``,
  ``.partial()`` and ``.expand_kwargs()`` make a mapped task group
  (:mod:`statewright.sdk.mappedtaskgroup`).

Every DAG has a root group (``dag.task_group``, no id); a task outside any group belongs to it.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk._dependency import DependencyMixin

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG

__all__ = ["TaskGroup", "current_task_group", "task_group"]

_GROUP_KEY_RE = re.compile(r"^[\w-]+$")
_MAX_KEY_LENGTH = 200


def current_task_group(dag: DAG | None) -> TaskGroup | None:
    """The innermost open ``with TaskGroup`` block of ``dag`` (else its root group)."""
    for group in reversed(_dag_context.open_task_groups()):
        if isinstance(group, TaskGroup) and (dag is None or group.dag is dag):
            return group
    return None if dag is None else dag.task_group


def validate_group_key(key: Any, what: str = "group_id") -> str:
    """Airflow's rule for group ids and task labels inside a group: no dots."""
    if not isinstance(key, str) or not key:
        raise DagDefinitionError(f"{what} must be a non-empty string, got {key!r}.")
    if len(key) > _MAX_KEY_LENGTH:
        raise DagDefinitionError(
            f"{what} {key[:40]!r}... is {len(key)} characters long; the limit is "
            f"{_MAX_KEY_LENGTH}.")
    if not _GROUP_KEY_RE.match(key):
        hint = " (a dot separates a group's id from the ids inside it)" if "." in key else ""
        raise DagDefinitionError(
            f"{what} {key!r} is not valid: use only letters, digits, underscores (_) and "
            f"dashes (-){hint}.")
    return key


class TaskGroup(DependencyMixin):
    """A group of tasks, shown as one box in the graph and as a collapsible row in the grid.

    ``group_id``: letters, digits, ``_`` and ``-``; ``prefix_group_id``: whether the ids of what is
    inside start with ``<group_id>.``; ``default_args``: merged over the parent group's and the
    DAG's for the tasks inside; ``tooltip``, ``ui_color``, ``ui_fgcolor``: shown in the UI.
    """

    def __init__(
        self,
        group_id: str | None,
        prefix_group_id: bool = True,
        parent_group: TaskGroup | None = None,
        dag: DAG | None = None,
        default_args: dict[str, Any] | None = None,
        tooltip: str = "",
        ui_color: str = "CornflowerBlue",
        ui_fgcolor: str = "#000",
        add_suffix_on_collision: bool = False,
        group_display_name: str = "",
    ) -> None:
        self.children: dict[str, BaseOperator | TaskGroup] = {}
        self.prefix_group_id = bool(prefix_group_id)
        self.tooltip = tooltip or ""
        self.ui_color = ui_color
        self.ui_fgcolor = ui_fgcolor
        self.group_display_name = group_display_name or ""
        self._group_id: str | None = None
        self.parent_group: TaskGroup | None = None
        self.dag: DAG | None = dag
        self.default_args: dict[str, Any] = {}
        if group_id is not None:  # else: a DAG's root group
            _check_group_arguments(group_id, default_args, tooltip, ui_color, ui_fgcolor)
            self._attach(group_id, parent_group, dag, add_suffix_on_collision)
            assert self.parent_group is not None
            self.default_args = {**self.parent_group.default_args, **(default_args or {})}

    def _attach(self, group_id: str, parent_group: TaskGroup | None, dag: DAG | None,
                add_suffix_on_collision: bool) -> None:
        """Join the DAG (given, the parent's, or the open ``with DAG``) under the parent group."""
        dag = dag or (parent_group.dag if parent_group else None) or _dag_context.current_dag()
        if dag is None:
            raise DagDefinitionError(
                f"task group {group_id!r} belongs to no DAG: create it inside `with DAG(...)`, "
                "inside a @dag function, or pass dag=...")
        parent = parent_group or current_task_group(dag) or dag.task_group
        if parent.dag is not dag:
            raise DagDefinitionError(
                f"task group {group_id!r}: its parent group {parent.group_id!r} belongs to "
                "another DAG.")
        self.dag, self.parent_group = dag, parent
        if add_suffix_on_collision:
            group_id = _unique_key(group_id, lambda key: self._taken(dag, parent, key))
        elif self._taken(dag, parent, group_id):
            raise DagDefinitionError(
                f"task group id {parent.child_id(group_id)!r} is used twice in DAG "
                f"{dag.dag_id!r}; give each group its own group_id.")
        self._group_id = group_id
        parent.children[group_id] = self
        dag.task_group_dict[parent.child_id(group_id)] = self

    @staticmethod
    def _taken(dag: DAG, parent: TaskGroup, key: str) -> bool:
        full = parent.child_id(key)
        return key in parent.children or full in dag.task_group_dict or full in dag.task_dict

    @classmethod
    def create_root(cls, dag: DAG) -> TaskGroup:
        """The group every DAG has: no id, no prefix, holding the tasks outside any group."""
        return cls(None, dag=dag)

    # -- ids ------------------------------------------------------------------------------------

    @property
    def is_root(self) -> bool:
        return self._group_id is None

    @property
    def label(self) -> str | None:
        """The group's own id, without its parents' prefix."""
        return self._group_id

    @property
    def group_id(self) -> str | None:
        """The full id: the parent's prefix (when the parent adds one) and the label."""
        parent = self.parent_group
        if self._group_id and parent is not None and parent.prefix_group_id and parent._group_id:
            return parent.child_id(self._group_id)
        return self._group_id

    def child_id(self, label: str) -> str:
        """The id of a task or group named ``label`` inside this group."""
        if self.prefix_group_id and self.group_id:
            return f"{self.group_id}.{label}"
        return label

    def path(self) -> list[str]:
        """Group ids from the outermost group down to this one (the root group left out)."""
        groups: list[str] = []
        group: TaskGroup | None = self
        while group is not None and not group.is_root:
            groups.append(group.group_id or "")
            group = group.parent_group
        return groups[::-1]

    # -- members ----------------------------------------------------------------------------------

    def add(self, task: BaseOperator, label: str) -> None:
        """Record ``task`` (created with the id ``label`` inside this group)."""
        if self.is_root:  # the DAG reports a task id used twice, with where each was defined
            self.children.setdefault(label, task)
            return
        if label in self.children and self.children[label] is not task:
            where = f"task group {self.group_id!r}" if not self.is_root else "the DAG"
            raise DagDefinitionError(
                f"task id {label!r} is used twice in {where} (full id {task.task_id!r}); give "
                "each task in a group its own task_id.")
        self.children[label] = task

    def iter_tasks(self) -> Iterator[BaseOperator]:
        """Every task in this group and in the groups nested in it."""
        for child in self.children.values():
            if isinstance(child, TaskGroup):
                yield from child.iter_tasks()
            else:
                yield child

    def iter_groups(self) -> Iterator[TaskGroup]:
        """This group's nested groups, depth first, parents before children."""
        for child in self.children.values():
            if isinstance(child, TaskGroup):
                yield child
                yield from child.iter_groups()

    @property
    def roots(self) -> list[BaseOperator]:
        """Tasks of the group with no upstream inside the group."""
        ids = {t.task_id for t in self.iter_tasks()}
        return [t for t in self.iter_tasks() if not (t.upstream_task_ids & ids)]

    @property
    def leaves(self) -> list[BaseOperator]:
        """Tasks of the group with no downstream inside the group.

        As Airflow's ``TaskGroup.get_leaves``: a teardown task at the end of the group is not a
        leaf; the last work tasks before it are (so ``group >> next`` does not wait on cleanup).
        """
        tasks = list(self.iter_tasks())
        by_id = {t.task_id: t for t in tasks}
        leaves: list[BaseOperator] = []
        for task in tasks:
            if task.downstream_task_ids & by_id.keys():
                continue
            found = [task] if not task.is_teardown else _work_before(task, by_id)
            leaves.extend(t for t in found if t not in leaves)
        return leaves

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> TaskGroup:
        if self.is_root:
            raise DagDefinitionError("a DAG's root task group cannot be entered.")
        _dag_context.open_task_groups().append(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        stack = _dag_context.open_task_groups()
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:
            stack.remove(self)

    def __repr__(self) -> str:
        return f"<TaskGroup: {self.group_id}>"

    # -- mapping: a task group itself is mapped through @task_group's .expand() -----------------

    is_mapped = False

    def expand(self, **kwargs: Any) -> Any:
        raise _group_mapping_error(self.group_id)

    def partial(self, **kwargs: Any) -> Any:
        raise _group_mapping_error(self.group_id)


def _work_before(teardown: BaseOperator, by_id: dict[str, BaseOperator]) -> list[BaseOperator]:
    """The last non-teardown tasks of the group before ``teardown`` (its setups excluded)."""
    found: list[BaseOperator] = []
    for up_id in sorted(teardown.upstream_task_ids & by_id.keys()):
        up = by_id[up_id]
        if up.is_teardown:
            found.extend(_work_before(up, by_id))
        elif teardown.is_teardown and up.is_setup:
            continue
        elif not any(d in by_id and d != teardown.task_id and not by_id[d].is_teardown
                     for d in up.downstream_task_ids):
            found.append(up)
    return found


def join_task_group(task: BaseOperator, group: TaskGroup, dag: DAG | None) -> str:
    """Put a new task in ``group``; returns its full id (the group's prefix and its own id)."""
    if dag is not None and group.dag is not None and group.dag is not dag:
        raise DagDefinitionError(
            f"task {task.task_id!r}: its task group {group.group_id!r} belongs to DAG "
            f"{group.dag.dag_id!r}, not to DAG {dag.dag_id!r}.")
    label = task.task_id
    full_id = group.child_id(label)
    task.task_id = full_id
    group.add(task, label)
    owner = dag or group.dag
    if not group.is_root and owner is not None and full_id in owner.task_dict:
        del group.children[label]  # the group keeps only tasks the DAG has
        raise DagDefinitionError(
            f"task id {full_id!r} (task {label!r} of task group {group.group_id!r}) is used "
            f"twice in DAG {owner.dag_id!r}; give each task its own task_id.")
    task.task_group = group
    mapped = mapped_group_of(group)
    if mapped is not None:
        mapped.adopt(task)
    return full_id


def adopt_task(dag: DAG, task: BaseOperator) -> None:
    """A task added to ``dag`` outside any group belongs to the DAG's root group."""
    if task.__dict__.get("task_group") is None:
        task.task_group = dag.task_group
        dag.task_group.children.setdefault(task.task_id, task)


def _check_group_arguments(group_id: Any, default_args: Any, tooltip: Any, ui_color: Any,
                           ui_fgcolor: Any) -> None:
    validate_group_key(group_id)
    if default_args is not None and not isinstance(default_args, dict):
        raise DagDefinitionError(
            f"task group {group_id!r}: default_args must be a dict, got {default_args!r}.")
    for name, value in (("tooltip", tooltip), ("ui_color", ui_color), ("ui_fgcolor", ui_fgcolor)):
        if not isinstance(value, str):
            raise DagDefinitionError(
                f"task group {group_id!r}: {name} must be a string, got {value!r}.")


def _group_mapping_error(name: str | None) -> DagDefinitionError:
    return DagDefinitionError(
        f"task group {name!r}: a TaskGroup object cannot be mapped; decorate the function that "
        "fills it with @task_group and call .expand() / .partial() / .expand_kwargs() on it.")


def mapped_group_of(group: TaskGroup | None) -> Any:
    """The mapped task group ``group`` is (or is nested in), else ``None``."""
    while group is not None:
        if group.is_mapped:
            return group
        group = group.parent_group
    return None


def _unique_key(key: str, taken: Callable[[str], bool]) -> str:
    """``key``, else ``key__1``, ``key__2``... (Airflow's ids for repeated @task_group calls)."""
    if not taken(key):
        return key
    core = re.split(r"__\d+$", key)[0]
    number = 1
    while taken(f"{core}__{number}"):
        number += 1
    return f"{core}__{number}"


def unique_label(dag: DAG, group: TaskGroup | None, task_id: str) -> str:
    """A label for a TaskFlow task so that its full id is new in ``dag`` (``name__1``...)."""
    def taken(label: str) -> bool:
        full = group.child_id(label) if group is not None else label
        return full in dag.task_dict or (group is not None and label in group.children)

    return _unique_key(task_id, taken)


class _TaskGroupDecorator:
    """A function wrapped by ``@task_group``: each call creates a group and fills it."""

    def __init__(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        if not callable(function):
            raise DagDefinitionError(
                f"@task_group must decorate a function, got {function!r}.")
        self.function = function
        self.kwargs = kwargs
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check_call(args, kwargs, self._group_id())
        return self._fill(self._new_group(), args, kwargs)

    def _group_id(self) -> str:
        return str(self.kwargs.get("group_id") or self.function.__name__)

    def _new_group(self, factory: Callable[..., TaskGroup] | None = None) -> TaskGroup:
        group_kwargs = dict(self.kwargs)
        group_id = group_kwargs.pop("group_id", None) or self.function.__name__
        group_kwargs.setdefault("add_suffix_on_collision", True)
        try:
            return (factory or TaskGroup)(group_id, **group_kwargs)
        except TypeError as exc:
            raise DagDefinitionError(f"@task_group {group_id!r}: {exc}") from None

    def _fill(self, group: TaskGroup, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with group:
            if not group.tooltip and self.function.__doc__:
                group.tooltip = inspect.cleandoc(self.function.__doc__)
            returned = self.function(*args, **kwargs)
        # As Airflow: what the function returns (a task's output, a list of tasks) is what edges
        # bind to; a function that returns nothing gives the group itself.
        return group if returned is None else returned

    def build(self, arguments: dict[str, Any], expand_input: Any) -> Any:
        """A mapped group (see statewright.sdk.mappedtaskgroup) filled with ``arguments``."""
        from statewright.sdk.mappedtaskgroup import MappedTaskGroup

        self._check_call((), arguments, self._group_id())
        group = self._new_group(functools.partial(MappedTaskGroup, expand_input=expand_input))
        returned = self._fill(group, (), arguments)
        group.link_references()  # type: ignore[attr-defined]
        return returned

    def _check_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], group_id: str) -> None:
        try:
            inspect.signature(self.function).bind(*args, **kwargs)
        except TypeError as exc:
            raise DagDefinitionError(f"task group {group_id!r}: {exc}") from None
        except ValueError:
            return

    def override(self, **kwargs: Any) -> _TaskGroupDecorator:
        """The same group factory with some group arguments changed."""
        return _TaskGroupDecorator(self.function, {**self.kwargs, **kwargs})

    def partial(self, **kwargs: Any) -> Any:
        """Arguments every instance of the mapped group shares; then ``.expand(...)`` or
        ``.expand_kwargs(...)``."""
        from statewright.sdk.mappedtaskgroup import TaskGroupPartial

        return TaskGroupPartial(self, kwargs)

    def expand(self, **kwargs: Any) -> Any:
        """One instance of every task of the group per item of ``kwargs``' values."""
        return self.partial().expand(**kwargs)

    def expand_kwargs(self, kwargs: Any, *, strict: bool = True) -> Any:
        """One instance of every task of the group per dict of keyword arguments."""
        return self.partial().expand_kwargs(kwargs, strict=strict)


def task_group(python_callable: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """``@task_group`` or ``@task_group(group_id=..., tooltip=..., default_args=...)``."""
    if python_callable is not None:
        return _TaskGroupDecorator(python_callable, kwargs)
    return lambda function: _TaskGroupDecorator(function, kwargs)
