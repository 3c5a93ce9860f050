"""The context a task's ``execute`` receives: Airflow's keys, built from in-memory inputs only.

``ti.xcom_pull`` reads from the upstream values handed to ``build_context``; ``ti.xcom_push``
collects this try's values, which the worker stores with the try's outcome. Nothing here touches
a database.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pendulum

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG

__all__ = ["Context", "DagRunInfo", "RuntimeTaskInstance", "build_context", "get_current_context"]

XCOM_RETURN_KEY = "return_value"
_current: contextvars.ContextVar[Context] = contextvars.ContextVar("statewright_task_context")


class Context(dict[str, Any]):
    """The run's values (``ti``, ``dag_run``, ``params``, ``ds``, ...) for one task try."""


@dataclass
class DagRunInfo:
    """What a task sees of its DAG run."""

    dag_id: str
    run_id: str
    conf: dict[str, Any]
    logical_date: datetime | None
    data_interval_start: datetime | None
    data_interval_end: datetime | None
    partition_key: str | None = None
    partition_date: datetime | None = None


@dataclass
class RuntimeTaskInstance:
    """The ``ti`` of the context: identity of the try and read access to upstream results."""

    task: BaseOperator
    dag_id: str
    run_id: str
    try_number: int
    max_tries: int
    map_index: int = -1
    xcoms: dict[str, Any] = field(default_factory=dict, repr=False)
    upstream_pushed: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """Values upstream tasks pushed under keys of their own: task id -> key -> value."""
    pushed: dict[str, Any] = field(default_factory=dict, repr=False)
    """What this try pushed (``xcom_push``): stored with the try's outcome, whatever it is."""
    skipped_task_ids: list[str] = field(default_factory=list)
    rendered_fields: dict[str, Any] | None = None
    """This try's template fields as rendered (stored with the try's outcome)."""
    # A sensor in reschedule mode: when this try first poked, and how often it has poked.
    first_poke_at: datetime | None = None
    poke_count: int = 0
    # Responses to ``pause_for_input`` in this try so far: key -> the response event.
    hitl_responses: dict[str, Any] = field(default_factory=dict, repr=False)
    _decoded: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    """Upstream values already read back through the XCom backend: (task id, key) -> value."""

    @property
    def task_id(self) -> str:
        return self.task.task_id

    def xcom_pull(
        self,
        task_ids: str | Iterable[str] | None = None,
        dag_id: str | None = None,
        key: str = XCOM_RETURN_KEY,
        include_prior_dates: bool = False,
        *,
        map_indexes: int | Iterable[int] | None = None,
        default: Any = None,
        **_: Any,
    ) -> Any:
        """Return value(s) of task(s) of this run: one value for a str, a list for a list.

        As in Airflow 3, ``task_ids=None`` means this task itself. A task that stored nothing
        gives ``default``. A ``key`` other than ``return_value`` reads what the task pushed under
        that key (``xcom_push``), else that item of a dict return value (what
        ``multiple_outputs`` stores under separate keys in Airflow).

        A mapped task's value is the sequence of its instances' values in map-index order;
        ``map_indexes`` picks one instance's value (an int) or a list of them (a list).
        """
        if dag_id not in (None, self.dag_id) or include_prior_dates:
            raise NotImplementedError(
                "xcom_pull reads results of this DAG run only (no dag_id of another DAG, "
                "no include_prior_dates)"
            )
        single = task_ids is None or isinstance(task_ids, str)
        ids = [self.task_id] if task_ids is None else [task_ids] if single else list(task_ids)
        values = [self._pull_one(str(task_id), key, default) for task_id in ids]
        if map_indexes is not None:
            values = [_pick_indexes(v, map_indexes, default) for v in values]
        return values[0] if single else values

    def _pull_one(self, task_id: str, key: str, default: Any) -> Any:
        if key != XCOM_RETURN_KEY:
            own = task_id == self.task_id
            pushed = self.pushed if own else self.upstream_pushed.get(task_id, {})
            if key in pushed:
                return self._read(task_id, key, pushed[key], cache=not own)
        if task_id not in self.xcoms:
            return default
        value = self._read(task_id, XCOM_RETURN_KEY, self.xcoms[task_id])
        if key == XCOM_RETURN_KEY:
            return value
        if isinstance(value, dict) and key in value:
            return value[key]
        return default

    def _read(self, task_id: str, key: str, stored: Any, cache: bool = True) -> Any:
        """A stored value read back through the XCom backend (once per task and key)."""
        if cache and (task_id, key) in self._decoded:
            return self._decoded[(task_id, key)]
        try:
            value = read_xcom(stored, key=key, dag_id=self.dag_id, run_id=self.run_id,
                              task_id=task_id)
        except Exception as exc:
            raise TypeError(f"task {self.task_id!r} cannot read the XCom {key!r} of task "
                            f"{task_id!r}: {type(exc).__name__}: {exc}") from exc
        if cache:
            self._decoded[(task_id, key)] = value
        return value

    def xcom_push(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` for this task instance (Airflow's ``ti.xcom_push``).

        It is written with the try's outcome, whether the try succeeds or not; a new try of the
        task starts without the previous try's values. Downstream tasks read it with
        ``ti.xcom_pull(task_ids=..., key=...)``. The value is stored by the XCom backend
        (``STATEWRIGHT_XCOM_BACKEND``; by default plain data and the types of
        :mod:`statewright.sdk.serde`).
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"task {self.task_id!r}: xcom_push needs a non-empty str key, "
                             f"got {key!r}")
        if key == XCOM_RETURN_KEY:
            raise ValueError(f"task {self.task_id!r}: the key {XCOM_RETURN_KEY!r} holds what "
                             "the task returns; return the value instead of pushing it")
        try:
            stored = store_xcom(self, key, value)
        except Exception as exc:
            name = getattr(exc, "type_name", None) or type(value).__name__
            raise TypeError(
                f"task {self.task_id!r}: xcom_push({key!r}, ...) got a value of type {name} "
                f"that cannot be stored as JSON ({' '.join(str(exc).split())}); push plain "
                "data or a supported type") from None
        self.pushed[key] = stored

    def skip_downstream(self, task_ids: Iterable[str]) -> None:
        """Ask for tasks of this run to be marked skipped when this try succeeds."""
        for task_id in task_ids:
            if task_id not in self.skipped_task_ids:
                self.skipped_task_ids.append(task_id)


class PerInstance(list[Any]):
    """A mapped upstream's values pushed under one key: one stored value per instance, in
    map-index order (each read back on its own)."""


def store_xcom(ti: RuntimeTaskInstance, key: str, value: Any) -> Any:
    """``value`` as the XCom backend stores it for ``ti`` under ``key``: JSON data (a custom
    backend that returns anything else is refused here, in the task)."""
    from statewright.sdk.xcom_backend import resolve_xcom_backend

    stored = resolve_xcom_backend().serialize_value(
        value, key=key, task_id=ti.task_id, dag_id=ti.dag_id, run_id=ti.run_id,
        map_index=ti.map_index)
    _check_json(stored)
    return stored


def _check_json(data: Any) -> None:
    if isinstance(data, float) and not math.isfinite(data):
        raise ValueError("the stored form holds NaN or Infinity, which JSON cannot")
    json.dumps(data, allow_nan=False)


def read_xcom(stored: Any, *, key: str, dag_id: str, run_id: str, task_id: str) -> Any:
    """A stored value read back through the XCom backend; a mapped upstream's sequence and
    per-instance lists value by value."""
    from statewright.sdk.expandinput import LazyXComSequence
    from statewright.sdk.xcom_backend import XComResult, resolve_xcom_backend

    backend = resolve_xcom_backend()

    def one(value: Any, map_index: int = -1) -> Any:
        if value is None:
            return None
        return backend.deserialize_value(XComResult(key, value, dag_id, run_id, task_id,
                                                    map_index))

    if isinstance(stored, LazyXComSequence):
        by_index = getattr(stored, "by_map_index", dict(enumerate(stored)))
        return LazyXComSequence.from_pairs([(m, one(v, m)) for m, v in by_index.items()])
    if isinstance(stored, PerInstance):
        return [one(v) for v in stored]
    return one(stored)


def _pick_indexes(value: Any, map_indexes: int | Iterable[int], default: Any) -> Any:
    at = getattr(value, "at", None)
    if at is None:  # not a mapped task's values: only its map index -1 exists
        if isinstance(map_indexes, int):
            return value if map_indexes == -1 else default
        return [value if m == -1 else default for m in map_indexes]
    if isinstance(map_indexes, int):
        return at(map_indexes, default)
    return [at(m, default) for m in map_indexes]


def build_context(
    dag: DAG,
    task: BaseOperator,
    *,
    run_id: str,
    logical_date: datetime | None,
    data_interval_start: datetime | None,
    data_interval_end: datetime | None,
    conf: dict[str, Any] | None,
    try_number: int,
    max_tries: int,
    xcoms: dict[str, Any],
    map_index: int = -1,
    pushed_xcoms: dict[str, dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    lazy: Mapping[str, Callable[[], Any]] | None = None,
    prev: Mapping[str, datetime | None] | None = None,
) -> Context:
    """The context of one try of ``task`` in the run ``run_id``.

    ``xcoms`` maps task ids of this run to their stored return values (include a task that
    returned ``None`` with the value ``None``; a task missing from it reads as "stored nothing").
    Params are the DAG's, then the task's, then the run's conf on top (Airflow's
    ``dag_run_conf_overrides_params``). ``lazy`` entries are computed when a task or template
    first reads them; ``prev`` holds the ``prev_*_success`` values of the previous successful run.
    """
    from statewright.sdk.context_extras import context_additions, run_params
    from statewright.sdk.task_state import state_context

    # As Airflow's: pendulum DateTimes (a datetime, with in_timezone, add, start_of …)
    logical_date, data_interval_start, data_interval_end = (
        _pendulum(logical_date), _pendulum(data_interval_start), _pendulum(data_interval_end))
    conf = dict(conf or {})
    params = run_params(dag, task, conf)
    ti = RuntimeTaskInstance(
        task=task,
        dag_id=dag.dag_id,
        run_id=run_id,
        try_number=try_number,
        max_tries=max_tries,
        map_index=map_index,
        xcoms=dict(xcoms),
        upstream_pushed=_pushed_by_task(xcoms, pushed_xcoms),
    )
    dag_run = DagRunInfo(
        dag_id=dag.dag_id,
        run_id=run_id,
        conf=conf,
        logical_date=logical_date,
        data_interval_start=data_interval_start,
        data_interval_end=data_interval_end,
    )
    context = Context(
        dag=dag,
        task=task,
        ti=ti,
        task_instance=ti,
        dag_run=dag_run,
        run_id=run_id,
        params=params,
        conf=conf,
        try_number=try_number,
        map_index=map_index,
        logical_date=logical_date,
        data_interval_start=data_interval_start,
        data_interval_end=data_interval_end,
        task_instance_key_str=f"{dag.dag_id}__{task.task_id}__{run_id}",
    )
    if logical_date is not None:
        ds = logical_date.strftime("%Y-%m-%d")
        ts = logical_date.isoformat()
        context.update(
            ds=ds,
            ds_nodash=ds.replace("-", ""),
            ts=ts,
            ts_nodash=logical_date.strftime("%Y%m%dT%H%M%S"),
            ts_nodash_with_tz=ts.replace("-", "").replace(":", ""),
            task_instance_key_str=f"{dag.dag_id}__{task.task_id}__{ds.replace('-', '')}",
        )
    context.update(context_additions(lazy=lazy, prev=prev))
    context.update(state_context(dag.dag_id, run_id, task.task_id, map_index, try_number))
    context.update(extra or {})
    for extension in _extensions:
        for key, value in extension(context).items():
            context.setdefault(key, value)
    dag_run.partition_key = context.get("partition_key")
    dag_run.partition_date = context.get("partition_date")
    return context


def _pendulum(value: datetime | None) -> datetime | None:
    """``value`` as a pendulum DateTime (UTC when it has no zone); None stays None."""
    if value is None or isinstance(value, pendulum.DateTime):
        return value
    try:
        return _as_pendulum(value, value.tzinfo)
    except TypeError:  # a zone that cannot be hashed
        return _as_pendulum.__wrapped__(value, value.tzinfo)


@functools.lru_cache(maxsize=64)
def _as_pendulum(value: datetime, tzinfo: Any) -> datetime:
    """Cached: a task process runs many tries of the same runs, whose dates are the same, and
    a pendulum DateTime cannot be changed (the zone is in the key: equal instants in other
    zones are equal datetimes)."""
    del tzinfo
    return pendulum.instance(value if value.tzinfo is not None else value.replace(tzinfo=UTC))


def _pushed_by_task(xcoms: Mapping[str, Any], pushed: Mapping[str, Mapping[str, Any]] | None
                    ) -> dict[str, dict[str, Any]]:
    """Upstream values pushed under keys of their own; a mapped upstream's (its return values
    are a ``LazyXComSequence``) as one ``PerInstance`` list per key."""
    from statewright.sdk.expandinput import LazyXComSequence

    out: dict[str, dict[str, Any]] = {}
    for task_id, values in (pushed or {}).items():
        mapped = isinstance(xcoms.get(task_id), LazyXComSequence)
        out[task_id] = {k: PerInstance(v) if mapped and isinstance(v, list) else v
                        for k, v in values.items()}
    return out


_extensions: list[Callable[[Context], Mapping[str, Any]]] = []


def add_context_extension(extension: Callable[[Context], Mapping[str, Any]]) -> None:
    """Have ``extension(context)`` add entries to every context ``build_context`` makes (keys
    the context has already are kept): the Airflow layer adds Airflow 2's keys this way."""
    if extension not in _extensions:
        _extensions.append(extension)


def get_current_context() -> Context:
    """The context of the task running now (for code that was not handed it)."""
    try:
        return _current.get()
    except LookupError:
        raise RuntimeError(
            "get_current_context() was called outside a running task; call it from inside "
            "the task's callable"
        ) from None


@contextmanager
def current_context(context: Context) -> Iterator[None]:
    token = _current.set(context)
    try:
        yield
    finally:
        _current.reset(token)
