"""References to values known only at run time: a task's output (``XComArg``), a DAG param.

Passing an ``XComArg`` to a task (directly, or inside a list, tuple or dict) makes the producing
task an upstream of the consumer; just before the consumer runs, the reference is replaced with
the producer's stored return value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statewright.sdk._dependency import DependencyMixin

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator

_NOTSET: Any = object()


class XComArg(DependencyMixin):
    """The return value of ``operator`` (or the item ``key`` of it, when it is a dict).

    ``XComArg(op)`` stands for the whole return value, ``XComArg(op)["total"]`` for
    ``return_value["total"]``. An upstream task that stored nothing resolves to ``None``.
    """

    def __init__(self, operator: BaseOperator, key: str | None = None) -> None:
        self.operator = operator
        self.key = key

    def __getitem__(self, key: str) -> XComArg:
        if self.key is not None:
            raise TypeError(
                f"{self!r} is already an item of the output of task "
                f"{self.operator.task_id!r}; index the value inside the consuming task instead"
            )
        return XComArg(self.operator, key)

    # -- mapping: transformed outputs (statewright.sdk.expandinput) -------------------------------

    def map(self, f: Any) -> XComArg:
        """Each item passed through ``f`` when the consuming task runs (Airflow's ``.map``)."""
        from statewright.sdk.expandinput import xcom_map

        return xcom_map(self, f)

    def zip(self, *others: XComArg, fillvalue: Any = _NOTSET) -> XComArg:
        """Tuples of the i-th items of this and ``others`` (the shortest decides the length,
        or the longest when a ``fillvalue`` is given)."""
        from statewright.sdk.expandinput import xcom_zip

        if fillvalue is _NOTSET:
            return xcom_zip(self, *others)
        return xcom_zip(self, *others, fillvalue=fillvalue)

    def concat(self, *others: XComArg) -> XComArg:
        """The items of this output, then those of ``others``."""
        from statewright.sdk.expandinput import xcom_concat

        return xcom_concat(self, *others)

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(
            f"the output of task {self.operator.task_id!r} is not known until that task runs, "
            "so it cannot be iterated over while the DAG is defined"
        )

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        suffix = f"[{self.key!r}]" if self.key is not None else ""
        return f"XComArg({self.operator.task_id!r}){suffix}"

    @property
    def roots(self) -> list[BaseOperator]:
        return [self.operator]

    @property
    def leaves(self) -> list[BaseOperator]:
        return [self.operator]

    # -- setup and teardown: the producing task's, as Airflow's PlainXComArg ----------------------

    @property
    def is_setup(self) -> bool:
        return self.operator.is_setup

    @is_setup.setter
    def is_setup(self, value: bool) -> None:
        self.operator.is_setup = value

    @property
    def is_teardown(self) -> bool:
        return self.operator.is_teardown

    @is_teardown.setter
    def is_teardown(self, value: bool) -> None:
        self.operator.is_teardown = value

    @property
    def on_failure_fail_dagrun(self) -> bool:
        return self.operator.on_failure_fail_dagrun

    @on_failure_fail_dagrun.setter
    def on_failure_fail_dagrun(self, value: bool) -> None:
        self.operator.on_failure_fail_dagrun = value

    def as_setup(self) -> XComArg:
        """Make the producing task a setup task; returns this output."""
        self.operator.as_setup()
        return self

    def as_teardown(
        self,
        *,
        setups: DependencyMixin | Sequence[DependencyMixin] | None = None,
        on_failure_fail_dagrun: bool | None = None,
    ) -> XComArg:
        """Make the producing task a teardown task (see ``BaseOperator.as_teardown``)."""
        self.operator.as_teardown(setups=setups, on_failure_fail_dagrun=on_failure_fail_dagrun)
        return self

    def __enter__(self) -> Any:
        return self.operator.__enter__()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.operator.__exit__(exc_type, exc, tb)

    def resolve(self, context: Mapping[str, Any]) -> Any:
        """The value this stands for in the run described by ``context``."""
        task_id = self.operator.task_id
        value = context["ti"].xcom_pull(task_ids=task_id, map_indexes=_same_index(self, context))
        if self.key is None or value is None:
            return value
        if not isinstance(value, Mapping):
            raise TypeError(
                f"task {context['ti'].task_id!r} reads item {self.key!r} of the output of task "
                f"{task_id!r}, but that output is a {type(value).__name__}, not a dict"
            )
        if self.key not in value:
            if getattr(self.operator, "multiple_outputs", False):
                return None
            raise KeyError(
                f"task {context['ti'].task_id!r} reads item {self.key!r} of the output of task "
                f"{task_id!r}, which has no such key (keys: {sorted(map(str, value))})"
            )
        return value[self.key]


def _same_index(arg: XComArg, context: Mapping[str, Any]) -> int | None:
    """Inside a mapped task group, an upstream task of the same group is read at this task
    instance's map index (Airflow's relevant upstream map indexes); else every instance."""
    group = arg.operator.__dict__.get("mapped_task_group")
    task = context.get("task")
    if group is None or task is None or task.__dict__.get("mapped_task_group") is not group:
        return None
    return int(context["ti"].map_index)


class DagParam:
    """A parameter of an ``@dag`` function: resolves to ``params[name]`` of the running DAG run."""

    def __init__(self, name: str, default: Any = _NOTSET) -> None:
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return f"DagParam({self.name!r})"

    def resolve(self, context: Mapping[str, Any]) -> Any:
        params = context.get("params") or {}
        if self.name in params:
            return params[self.name]
        if self.default is not _NOTSET:
            return self.default
        raise KeyError(
            f"no value for DAG parameter {self.name!r}: give it a default in the @dag "
            "function or pass it in the run's conf"
        )


def iter_leaves(value: Any) -> Iterator[Any]:
    """Every item inside ``value`` that is not a list, tuple, set or dict (dicts: the values)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from iter_leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_leaves(item)
    else:
        yield value


def iter_xcom_args(value: Any) -> Iterator[XComArg]:
    """Every XComArg inside ``value`` (searched through lists, tuples, sets and dicts)."""
    return (item for item in iter_leaves(value) if isinstance(item, XComArg))


def has_references(value: Any) -> bool:
    if isinstance(value, (XComArg, DagParam)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(has_references(item) for item in value)
    if isinstance(value, dict):
        return any(has_references(item) for item in value.values())
    return False


def resolve_references(value: Any, context: Mapping[str, Any]) -> Any:
    """A copy of ``value`` with every XComArg and DagParam replaced by its run-time value."""
    if isinstance(value, (XComArg, DagParam)):
        return value.resolve(context)
    if not has_references(value):
        return value
    if isinstance(value, list):
        return [resolve_references(item, context) for item in value]
    if isinstance(value, tuple):
        items = [resolve_references(item, context) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, (set, frozenset)):
        return type(value)(resolve_references(item, context) for item in value)
    if isinstance(value, dict):
        return {key: resolve_references(item, context) for key, item in value.items()}
    return value
