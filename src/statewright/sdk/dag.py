"""DAG: a named graph of tasks with its schedule and run settings; and the ``@dag`` decorator."""

from __future__ import annotations

import functools
import heapq
import inspect
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import Timetable
from statewright.sdk import _dag_context
from statewright.sdk._task_dates import join_dag_dates
from statewright.sdk._validation import (
    check_int,
    to_callback_list,
    to_timedelta,
    unknown_arguments_message,
    validate_id,
)
from statewright.sdk.assets import asset_schedule, is_asset_schedule
from statewright.sdk.params import ParamsDict, check_params
from statewright.sdk.taskgroup import TaskGroup, adopt_task
from statewright.sdk.templating import check_template_arguments, check_templates
from statewright.sdk.xcom_arg import DagParam

if TYPE_CHECKING:
    from statewright.core.trigger_rules import TriggerRule
    from statewright.sdk.baseoperator import BaseOperator

__all__ = ["DAG", "dag"]

SCHEDULE_PRESETS = frozenset(
    {
        "@once",
        "@continuous",
        "@hourly",
        "@daily",
        "@weekly",
        "@monthly",
        "@quarterly",
        "@yearly",
        "@annually",
        "@midnight",
    }
)
# Airflow's FailStopDagInvalidTriggerRule: all_success, and a teardown's all_done_setup_success.
_FAIL_STOP_RULES = frozenset({"all_success", "all_done_setup_success"})
_RENAMED = {
    "schedule_interval": "schedule",
    "timetable": "schedule",
    "concurrency": "max_active_tasks",
}
_DAG_ARGUMENTS = (
    "dag_id",
    "dag_display_name",
    "description",
    "schedule",
    "start_date",
    "end_date",
    "catchup",
    "timezone",
    "default_args",
    "max_active_runs",
    "max_active_tasks",
    "max_consecutive_failed_dag_runs",
    "fail_stop",
    "fail_fast",
    "params",
    "tags",
    "doc_md",
    "is_paused_upon_creation",
    "on_success_callback",
    "on_failure_callback",
    "dagrun_timeout",
    "deadline",
    "template_searchpath",
    "template_undefined",
    "user_defined_macros",
    "user_defined_filters",
    "render_template_as_native_obj",
    "jinja_environment_kwargs",
)


_test_runner: Callable[..., Any] | None = None


def set_dag_test_runner(runner: Callable[..., Any] | None) -> None:
    """Hand in what runs ``dag.test()`` (by default the ``dag_test`` entry point of the
    ``statewright.runners`` group: the scheduler and executor, in this process)."""
    global _test_runner
    _test_runner = runner


def dag_test_runner() -> Callable[..., Any]:
    if _test_runner is None:
        from importlib.metadata import entry_points

        found = list(entry_points(group="statewright.runners", name="dag_test"))
        if not found:
            raise DagDefinitionError(
                "dag.test() needs statewright's runner, which is not installed here: install "
                "the statewright package (pip install statewright), not only its SDK files.")
        set_dag_test_runner(found[0].load())
    assert _test_runner is not None
    return _test_runner


class DAG:
    """A DAG, usable as a context manager: tasks created inside ``with DAG(...)`` join it."""

    def __init__(
        self,
        dag_id: str,
        *,
        description: str | None = None,
        schedule: Any = None,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
        catchup: bool = False,
        timezone: str | tzinfo | None = None,
        default_args: dict[str, Any] | None = None,
        max_active_runs: int = 16,
        max_active_tasks: int = 16,
        max_consecutive_failed_dag_runs: int | None = None,
        fail_stop: bool | None = None,
        fail_fast: bool | None = None,
        params: dict[str, Any] | None = None,
        tags: list[str] | None = None,
        doc_md: str | None = None,
        is_paused_upon_creation: bool | None = None,
        on_success_callback: Any = None,
        on_failure_callback: Any = None,
        dagrun_timeout: timedelta | float | None = None,
        deadline: Any = None,
        template_searchpath: str | list[str] | None = None,
        template_undefined: type[Any] | None = None,
        user_defined_macros: dict[str, Any] | None = None,
        user_defined_filters: dict[str, Any] | None = None,
        render_template_as_native_obj: bool = False,
        jinja_environment_kwargs: dict[str, Any] | None = None,
        dag_display_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.dag_id = validate_id(dag_id, "dag_id")
        if dag_display_name is not None and not isinstance(dag_display_name, str):
            raise DagDefinitionError(f"DAG {dag_id!r}: dag_display_name must be a string.")
        self.dag_display_name: str = dag_display_name or self.dag_id
        """The name the UI and CLI show (Airflow's ``dag_display_name``; the id by default)."""
        where = f"DAG {dag_id!r}"
        if kwargs:
            hints = [f"{k!r} is now {_RENAMED[k]!r}" for k in kwargs if k in _RENAMED]
            raise DagDefinitionError(
                f"{where} got unknown argument(s) "
                f"{unknown_arguments_message(kwargs, _DAG_ARGUMENTS)}"
                + (f" ({'; '.join(hints)})" if hints else "")
                + "."
            )
        self.fileloc, _ = _dag_context.caller_location()
        if default_args is not None and not isinstance(default_args, dict):
            raise DagDefinitionError(f"{where}: default_args must be a dict.")
        self.default_args: dict[str, Any] = dict(default_args or {})
        self.description = description
        self.schedule = _check_schedule(schedule, where)
        self.timezone: tzinfo = _resolve_timezone(
            timezone, start_date or self.default_args.get("start_date"), where
        )
        self.start_date = _to_aware(
            start_date or self.default_args.get("start_date"), self.timezone, f"{where}: start_date"
        )
        self.end_date = _to_aware(
            end_date or self.default_args.get("end_date"), self.timezone, f"{where}: end_date"
        )
        if self.start_date and self.end_date and self.end_date < self.start_date:
            raise DagDefinitionError(f"{where}: end_date is before start_date.")
        self.catchup = bool(catchup)
        self.max_active_runs = _positive_int(max_active_runs, f"{where}: max_active_runs")
        self.max_active_tasks = _positive_int(max_active_tasks, f"{where}: max_active_tasks")
        # The scheduler pauses the DAG once this many runs in a row ended failed (0: never).
        self.max_consecutive_failed_dag_runs = 0 if max_consecutive_failed_dag_runs is None \
            else check_int(max_consecutive_failed_dag_runs,
                           f"{where}: max_consecutive_failed_dag_runs", minimum=0)
        if fail_stop is not None and fail_fast is not None and bool(fail_stop) != bool(fail_fast):
            raise DagDefinitionError(
                f"{where}: fail_stop={fail_stop!r} and fail_fast={fail_fast!r} disagree; they are "
                "two names of one setting, give only one."
            )
        self.fail_stop = bool(fail_stop if fail_stop is not None else fail_fast)
        if params is not None and not isinstance(params, dict):
            raise DagDefinitionError(f"{where}: params must be a dict, got {params!r}.")
        self.params = ParamsDict(params)
        self.params.update(ParamsDict(self.default_args.pop("params", None) or {}))
        check_params(self.params, where)
        _check_required_params(self.params, self.schedule, where)
        self.template_searchpath, self.template_undefined = template_searchpath, template_undefined
        self.user_defined_macros, self.user_defined_filters = (
            user_defined_macros, user_defined_filters)
        self.render_template_as_native_obj = render_template_as_native_obj
        self.jinja_environment_kwargs = jinja_environment_kwargs
        check_template_arguments(self, where)
        self.tags = _check_tags(tags, where)
        self.doc_md = doc_md
        self.is_paused_upon_creation = (
            None if is_paused_upon_creation is None else bool(is_paused_upon_creation)
        )
        self.on_success_callback = to_callback_list(
            on_success_callback, f"{where}: on_success_callback"
        )
        self.on_failure_callback = to_callback_list(
            on_failure_callback, f"{where}: on_failure_callback"
        )
        self.dagrun_timeout = to_timedelta(
            dagrun_timeout, f"{where}: dagrun_timeout", allow_none=True
        )
        from statewright.sdk.deadline import to_deadline_list

        self.deadline = to_deadline_list(deadline, where)
        self.task_dict: dict[str, BaseOperator] = {}
        # Task groups (statewright.sdk.taskgroup) and edge labels (statewright.sdk.edges).
        self.task_group_dict: dict[str, TaskGroup] = {}
        self.task_group: TaskGroup = TaskGroup.create_root(self)
        self.edge_info: dict[str, dict[str, dict[str, str]]] = {}

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> DAG:
        _dag_context.push_dag(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _dag_context.pop_dag(self)
        if exc_type is None:
            self.validate()
            _dag_context.register_dag(self)

    def __repr__(self) -> str:
        return f"<DAG: {self.dag_id}>"

    # -- tasks ----------------------------------------------------------------------------------

    @property
    def tasks(self) -> list[BaseOperator]:
        return list(self.task_dict.values())

    @property
    def task_ids(self) -> list[str]:
        return list(self.task_dict)

    @property
    def roots(self) -> list[BaseOperator]:
        """Tasks with no upstream task."""
        return [t for t in self.task_dict.values() if not t.upstream_task_ids]

    @property
    def leaves(self) -> list[BaseOperator]:
        """Tasks with no downstream task."""
        return [t for t in self.task_dict.values() if not t.downstream_task_ids]

    def has_task(self, task_id: str) -> bool:
        return task_id in self.task_dict

    def get_task(self, task_id: str) -> BaseOperator:
        try:
            return self.task_dict[task_id]
        except KeyError:
            raise DagDefinitionError(
                f"DAG {self.dag_id!r} (defined in {self.fileloc}) has no task {task_id!r}; "
                f"its tasks are: {', '.join(sorted(self.task_dict)) or 'none'}."
            ) from None

    def add_task(self, task: BaseOperator) -> None:
        existing = self.task_dict.get(task.task_id)
        if existing is task:
            return
        if existing is not None:
            raise DagDefinitionError(
                f"task id {task.task_id!r} is used twice in DAG {self.dag_id!r}: by "
                f"{_describe(existing)} and by {_describe(task)}. Give each task its own task_id."
            )
        if task.dag is not None and task.dag is not self:
            raise DagDefinitionError(
                f"task {task.task_id!r} already belongs to DAG {task.dag.dag_id!r} and cannot "
                f"be added to DAG {self.dag_id!r}."
            )
        self._check_fail_stop_rule(task.task_id, task.trigger_rule)
        self.task_dict[task.task_id] = task
        task._dag = self
        join_dag_dates(task, self)  # the later start and earlier end of the task and the DAG
        adopt_task(self, task)

    def set_edge_info(self, upstream_task_id: str, downstream_task_id: str,
                      info: dict[str, str]) -> None:
        """Record what is shown on an edge (its label), as Airflow's ``DAG.set_edge_info``."""
        self.edge_info.setdefault(upstream_task_id, {})[downstream_task_id] = dict(info)

    def get_edge_info(self, upstream_task_id: str, downstream_task_id: str) -> dict[str, str]:
        return dict(self.edge_info.get(upstream_task_id, {}).get(downstream_task_id, {}))

    def add_tasks(self, tasks: list[BaseOperator]) -> None:
        for task in tasks:
            self.add_task(task)

    def _check_fail_stop_rule(self, task_id: str, rule: TriggerRule) -> None:
        if self.fail_stop and str(rule) not in _FAIL_STOP_RULES:
            raise DagDefinitionError(
                f"DAG {self.dag_id!r} has fail_stop (fail_fast) on, so its tasks must use the "
                f"all_success trigger rule (teardown tasks: all_done_setup_success); task "
                f"{task_id!r} uses {str(rule)!r}."
            )

    # -- graph checks -----------------------------------------------------------------------------

    def validate(self) -> None:
        """Raise DagDefinitionError when the DAG cannot run as written (a cycle, a bad rule)."""
        for task in self.task_dict.values():
            self._check_fail_stop_rule(task.task_id, task.trigger_rule)
            for other in task.upstream_task_ids | task.downstream_task_ids:
                if other not in self.task_dict:
                    raise DagDefinitionError(
                        f"DAG {self.dag_id!r}: task {task.task_id!r} is linked to {other!r}, "
                        "which is not a task of this DAG."
                    )
        cycle = self._find_cycle()
        if cycle:
            raise DagDefinitionError(
                f"DAG {self.dag_id!r} has a cycle: {' >> '.join(cycle)}. "
                "Remove one of these dependencies."
            )
        self._validate_setup_teardown()
        check_templates(self)

    def _validate_setup_teardown(self) -> None:
        """Airflow's ``DAG.validate_setup_teardown``: a task directly after a setup task is a
        teardown or uses ``all_success`` (what clearing a setup re-runs must be consistent)."""
        for task in self.task_dict.values():
            if not task.is_setup:
                continue
            for down_id in sorted(task.downstream_task_ids):
                down = self.task_dict[down_id]
                if not down.is_teardown and str(down.trigger_rule) != "all_success":
                    raise DagDefinitionError(
                        f"DAG {self.dag_id!r}: task {down_id!r} directly follows setup task "
                        f"{task.task_id!r}, so it must use the all_success trigger rule (it "
                        f"uses {str(down.trigger_rule)!r}); setup tasks must be followed with "
                        "trigger rule all_success."
                    )

    def _find_cycle(self) -> list[str] | None:
        """One cycle as a closed path of task ids (first id repeated last), or None."""
        white, grey, black = 0, 1, 2
        color = dict.fromkeys(self.task_dict, white)
        for start in self.task_dict:
            if color[start] != white:
                continue
            path = [start]
            iters = [iter(sorted(self.task_dict[start].downstream_task_ids))]
            color[start] = grey
            while iters:
                nxt = next(iters[-1], None)
                if nxt is None:
                    color[path.pop()] = black
                    iters.pop()
                elif color[nxt] == grey:
                    return [*path[path.index(nxt) :], nxt]
                elif color[nxt] == white:
                    color[nxt] = grey
                    path.append(nxt)
                    iters.append(iter(sorted(self.task_dict[nxt].downstream_task_ids)))
        return None

    def topological_sort(self) -> list[BaseOperator]:
        """Tasks ordered so each comes after all its upstream tasks (ties: definition order)."""
        self.validate()
        order: list[BaseOperator] = []
        indegree = {tid: len(t.upstream_task_ids) for tid, t in self.task_dict.items()}
        position = {tid: i for i, tid in enumerate(self.task_dict)}
        ready = [position[tid] for tid, n in indegree.items() if n == 0]  # a heap of positions
        ids = list(self.task_dict)
        while ready:
            tid = ids[heapq.heappop(ready)]
            order.append(self.task_dict[tid])
            for down in self.task_dict[tid].downstream_task_ids:
                indegree[down] -= 1
                if indegree[down] == 0:
                    heapq.heappush(ready, position[down])
        return order

    # -- outputs --------------------------------------------------------------------------------

    def serialize(self) -> dict[str, Any]:
        """The JSON-able description of this DAG that the scheduler works from."""
        from statewright.sdk.serialization import serialize_dag

        return serialize_dag(self)

    def test(self, conf: dict[str, Any] | None = None, *,
             run_conf: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run this DAG once, in this process, and report how each task ended.

        ``run_conf`` (Airflow's keyword) or ``conf`` is the run's conf, validated against the
        DAG's params before the run is created."""
        if conf is not None and run_conf is not None and conf != run_conf:
            raise DagDefinitionError(
                f"DAG {self.dag_id!r}: test() got both conf= and run_conf=; they are two names "
                "of one argument, give only one.")
        return dag_test_runner()(self, conf=run_conf if run_conf is not None else conf, **kwargs)

    # -- templating -----------------------------------------------------------------------------

    def get_template_env(self, *, force_sandboxed: bool = False) -> Any:
        """The Jinja environment this DAG's templates are rendered in (sandboxed)."""
        from statewright.sdk.templating import create_template_env

        return create_template_env(self, native=None if not force_sandboxed else False)


def dag(dag_id: str | Callable[..., Any] | None = None, **dag_kwargs: Any) -> Callable[..., Any]:
    """Turn a function that creates tasks into a DAG factory (Airflow's ``@dag``).

    Calling the decorated function returns the DAG. Its parameters become DAG params: their
    defaults go into ``params``, and tasks given them receive the run's value.
    """
    if callable(dag_id):
        return dag()(dag_id)

    def decorator(function: Callable[..., Any]) -> Callable[..., DAG]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def factory(*args: Any, **kwargs: Any) -> DAG:
            kwargs_for_dag = dict(dag_kwargs)
            if function.__doc__ and "doc_md" not in kwargs_for_dag:
                kwargs_for_dag["doc_md"] = inspect.cleandoc(function.__doc__)
            new_dag = DAG(dag_id or function.__name__, **kwargs_for_dag)
            try:
                bound = signature.bind_partial(*args, **kwargs)
            except TypeError as exc:
                raise DagDefinitionError(f"@dag {new_dag.dag_id!r}: {exc}") from None
            bound.apply_defaults()
            for name, param in signature.parameters.items():
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                if name in bound.arguments:
                    new_dag.params.setdefault(name, bound.arguments[name])
                    bound.arguments[name] = DagParam(name, bound.arguments[name])
                else:
                    bound.arguments[name] = DagParam(name)
            check_params(new_dag.params, f"DAG {new_dag.dag_id!r}")
            with new_dag:
                function(*bound.args, **bound.kwargs)
            return new_dag

        return factory

    return decorator


# -- helpers --------------------------------------------------------------------------------------


def _check_required_params(params: ParamsDict, schedule: Any, where: str) -> None:
    """Airflow: a scheduled run has no conf, so every param needs a default."""
    required = [k for k, p in params.to_params().items() if not p.has_value]
    if schedule is not None and required:
        raise DagDefinitionError(
            f"{where}: params {', '.join(map(repr, required))} have no default value, so the "
            "DAG's schedule must be None (a scheduled run has no conf to give them); give them "
            "defaults or set schedule=None.")


def _describe(task: BaseOperator) -> str:
    filename, line = task.__dict__.get("defined_at", ("", 0))
    where = f" (defined at {filename}:{line})" if filename else ""
    return f"{type(task).__name__}{where}"


def _check_schedule(schedule: Any, where: str) -> Any:
    if schedule is None:
        return None
    if is_asset_schedule(schedule):
        return asset_schedule(schedule, where)
    if isinstance(schedule, Timetable):
        try:
            schedule.validate()
        except Exception as exc:
            raise DagDefinitionError(f"{where}: timetable {type(schedule).__name__} is not "
                                     f"valid: {exc}") from exc
        return schedule
    if isinstance(schedule, timedelta):
        if schedule <= timedelta(0):
            raise DagDefinitionError(f"{where}: a timedelta schedule must be positive.")
        return schedule
    if isinstance(schedule, str):
        text = schedule.strip()
        if text.startswith("@"):
            if text not in SCHEDULE_PRESETS:
                raise DagDefinitionError(
                    f"{where}: unknown schedule preset {schedule!r}; use one of "
                    f"{', '.join(sorted(SCHEDULE_PRESETS))}, a cron expression, or a timedelta."
                )
        elif not croniter.is_valid(text):
            raise DagDefinitionError(
                f"{where}: schedule {schedule!r} is not a valid cron expression "
                "(e.g. '0 6 * * *'), preset (e.g. '@daily') or timedelta."
            )
        return text
    raise DagDefinitionError(
        f"{where}: schedule must be None, a cron expression, a preset such as '@daily', or a "
        f"timedelta; got {type(schedule).__name__}."
    )


def _resolve_timezone(value: str | tzinfo | None, start_date: Any, where: str) -> tzinfo:
    if isinstance(value, str):
        zone = _zone_named(value)
        if zone is None:
            raise DagDefinitionError(
                f"{where}: unknown timezone {value!r}; use an IANA name such as 'Europe/Paris'."
            )
        return zone
    if isinstance(value, tzinfo):
        return _plain_tz(value)
    if value is not None:
        raise DagDefinitionError(f"{where}: timezone must be an IANA name or a tzinfo.")
    if isinstance(start_date, datetime) and start_date.tzinfo is not None:
        return _plain_tz(start_date.tzinfo)
    return UTC


def _plain_tz(tz: tzinfo) -> tzinfo:
    """A zone of another library (pendulum's ``Timezone``) as the standard library's zone."""
    if tz is UTC or type(tz) is ZoneInfo:
        return tz
    key = getattr(tz, "key", None) or getattr(tz, "name", None)
    return (_zone_named(key) if isinstance(key, str) else None) or tz


def _zone_named(name: str) -> tzinfo | None:
    """``UTC`` or the IANA zone of that name; None for an unknown name."""
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def timezone_name(tz: tzinfo) -> str:
    """An IANA name, ``UTC``, or a fixed offset such as ``+05:30``."""
    if tz == UTC:
        return "UTC"
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if isinstance(key, str):
        return key
    offset = datetime(2000, 1, 1, tzinfo=tz).utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _to_aware(value: Any, tz: tzinfo, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise DagDefinitionError(f"{what} must be a datetime, got {type(value).__name__}.")
    if type(value) is not datetime:  # a subclass such as pendulum.DateTime: keep plain values
        zone = _plain_tz(value.tzinfo) if value.tzinfo is not None else None
        value = datetime(value.year, value.month, value.day, value.hour, value.minute,
                         value.second, value.microsecond, tzinfo=zone, fold=value.fold)
    return value.replace(tzinfo=tz) if value.tzinfo is None else value


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DagDefinitionError(f"{what} must be a positive integer, got {value!r}.")
    return value


def _check_tags(tags: Any, where: str) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str) or not all(isinstance(t, str) and t for t in tags):
        raise DagDefinitionError(f"{where}: tags must be a list of non-empty strings.")
    return list(dict.fromkeys(tags))
