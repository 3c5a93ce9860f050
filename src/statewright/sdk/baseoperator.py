"""BaseOperator: the arguments every task takes, its place in the DAG, and ``chain``.

As in Airflow, arguments a task leaves unset are taken from its DAG's ``default_args`` (and from a
``default_args`` passed to the task itself), for every class in the operator's hierarchy.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from statewright.core.errors import DagDefinitionError
from statewright.core.trigger_rules import TriggerRule, parse_trigger_rule
from statewright.sdk import _setup_teardown
from statewright.sdk import assets as _assets
from statewright.sdk._default_args import _apply_defaults
from statewright.sdk._dependency import (
    DependencyMixin,
    chain,
    common_dag,
    cross_downstream,
    flatten_relatives,
    is_dag,
)
from statewright.sdk._task_dates import check_task_date
from statewright.sdk._validation import (
    INT32_MAX,
    check_backoff,
    check_bool,
    check_hook,
    check_int,
    check_name,
    check_retries,
    check_weight_rule,
    to_callback_list,
    to_timedelta,
    unknown_arguments_message,
    validate_id,
)
from statewright.sdk.email import email_args
from statewright.sdk.hooks import check_cache_args, to_state_hooks
from statewright.sdk.logging_mixin import LoggingMixin
from statewright.sdk.params import ParamsDict, check_params
from statewright.sdk.retry_policy import check_retry_policy
from statewright.sdk.taskgroup import TaskGroup, join_task_group
from statewright.sdk.templating import Templater
from statewright.sdk.xcom_arg import XComArg, iter_xcom_args

if TYPE_CHECKING:
    from statewright.sdk.dag import DAG

__all__ = ["BaseOperator", "chain", "cross_downstream"]

DEFAULT_RETRY_DELAY = timedelta(seconds=300)
DEFAULT_POOL = "default_pool"
DEFAULT_QUEUE = "default"
CALLBACK_KINDS = ("on_execute", "on_success", "on_failure", "on_retry", "on_skipped")
_PRIORITY_RANGE = (-(2**31), 2**31 - 1)


class BaseOperator(DependencyMixin, Templater, LoggingMixin, abc.ABC):
    """A task: one node of a DAG. Subclasses implement ``execute(context)``.

    The arguments are Airflow's task arguments; ``execution_timeout``, ``retry_delay`` and
    ``max_retry_delay`` accept a ``timedelta`` or a number of seconds.
    """

    # Airflow's template fields: rendered as Jinja templates before ``execute`` (see
    # ``statewright.sdk.templating``); XComArgs in them create upstream edges.
    template_fields: ClassVar[Sequence[str]] = ()
    is_sensor: ClassVar[bool] = False
    deferrable: bool = False
    # Setup / teardown (Airflow 2.7+): set with as_setup() / as_teardown() or @setup / @teardown.
    _is_setup: bool = False
    _is_teardown: bool = False
    _on_failure_fail_dagrun: bool = False
    # self.log (LoggingMixin): statewright.task.operators.<module>.<Class>, or .<logger_name>.
    _log_config_logger_name: ClassVar[str | None] = "statewright.task.operators"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_applies_defaults", False):
            cls.__init__ = _apply_defaults(init)  # type: ignore[method-assign]

    def __init__(
        self,
        task_id: str,
        *,
        dag: DAG | None = None,
        task_group: TaskGroup | None = None,
        default_args: dict[str, Any] | None = None,
        owner: str | None = None,
        retries: int | None = 0,
        retry_delay: timedelta | float = DEFAULT_RETRY_DELAY,
        retry_exponential_backoff: bool = False,
        max_retry_delay: timedelta | float | None = None,
        retry_policy: Any = None,
        execution_timeout: timedelta | float | None = None,
        trigger_rule: str | TriggerRule = "all_success",
        priority_weight: int = 1,
        weight_rule: Any = "downstream",
        pool: str | None = DEFAULT_POOL,
        pool_slots: int = 1,
        queue: str = DEFAULT_QUEUE,
        depends_on_past: bool = False,
        max_active_tis_per_dag: int | None = None,
        max_active_tis_per_dagrun: int | None = None,
        map_index_template: str | None = None,
        params: dict[str, Any] | None = None,
        doc_md: str | None = None,
        doc: str | None = None,
        do_xcom_push: bool = True,
        multiple_outputs: bool = False,
        on_execute_callback: Any = None,
        on_success_callback: Any = None,
        on_failure_callback: Any = None,
        on_retry_callback: Any = None,
        on_skipped_callback: Any = None,
        email: str | Sequence[str] | None = None,
        email_on_failure: bool = True,
        email_on_retry: bool = True,
        on_state: Any = None,
        on_state_change: Any = None,
        pre_execute: Any = None,
        post_execute: Any = None,
        cache_key_fn: Any = None,
        cache_expiration: timedelta | float | None = None,
        outlets: Any = None,
        inlets: Any = None,
        task_display_name: str | None = None,
        logger_name: str | None = None,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
        **kwargs: Any,
    ) -> None:
        self.task_id = validate_id(task_id, "task_id")
        self._logger_name = logger_name
        self.start_date = check_task_date(start_date, f"task {task_id!r}: start_date")
        self.end_date = check_task_date(end_date, f"task {task_id!r}: end_date")
        if task_display_name is not None and not isinstance(task_display_name, str):
            raise DagDefinitionError(f"task {task_id!r}: task_display_name must be a string.")
        self._task_display_name = task_display_name
        if kwargs:
            known = {
                *inspect.signature(type(self).__init__).parameters,
                *inspect.signature(BaseOperator.__init__).parameters,
            } - {"self", "kwargs"}
            raise DagDefinitionError(
                f"{type(self).__name__}(task_id={task_id!r}) got unknown argument(s) "
                f"{unknown_arguments_message(kwargs, known)}."
            )
        if dag is not None and not is_dag(dag):
            raise DagDefinitionError(
                f"task {task_id!r}: dag= must be a DAG, got {type(dag).__name__}."
            )
        self.task_group: TaskGroup | None = None
        if task_group is not None:
            self.task_id = join_task_group(self, task_group, dag)
            task_id = self.task_id
        where = f"task {task_id!r}"
        self._dag: DAG | None = None
        self._dag_requested = dag
        self.owner = owner
        self.retries = check_retries(retries, where)
        self.retry_delay: timedelta = to_timedelta(retry_delay, f"{where}: retry_delay")  # type: ignore[assignment]
        self.retry_exponential_backoff = check_backoff(retry_exponential_backoff, where)
        self.max_retry_delay = to_timedelta(
            max_retry_delay, f"{where}: max_retry_delay", allow_none=True
        )
        # Airflow 3.3's retry policy: asked in the task's process (statewright.sdk.retry_policy).
        self.retry_policy = check_retry_policy(retry_policy, where)
        self.execution_timeout = to_timedelta(
            execution_timeout, f"{where}: execution_timeout", allow_none=True
        )
        if self.execution_timeout is not None and self.execution_timeout <= timedelta(0):
            raise DagDefinitionError(f"{where}: execution_timeout must be positive.")
        self.trigger_rule = trigger_rule  # type: ignore[assignment]  # validated by the setter
        self.priority_weight = check_int(priority_weight, f"{where}: priority_weight")
        if not _PRIORITY_RANGE[0] <= self.priority_weight <= _PRIORITY_RANGE[1]:
            raise DagDefinitionError(f"{where}: priority_weight must fit in 32 bits.")
        self.weight_rule = check_weight_rule(weight_rule, where)
        self.pool = DEFAULT_POOL if pool is None else check_name(pool, f"{where}: pool")
        self.pool_slots = check_int(pool_slots, f"{where}: pool_slots", minimum=1,
                                    maximum=INT32_MAX)
        self.queue = check_name(queue, f"{where}: queue")
        self.depends_on_past = bool(depends_on_past)
        self.max_active_tis_per_dag = (
            None
            if max_active_tis_per_dag is None
            else check_int(max_active_tis_per_dag, f"{where}: max_active_tis_per_dag", minimum=1)
        )
        self.max_active_tis_per_dagrun = None if max_active_tis_per_dagrun is None else \
            check_int(max_active_tis_per_dagrun, f"{where}: max_active_tis_per_dagrun", minimum=1)
        if map_index_template is not None and not isinstance(map_index_template, str):
            raise DagDefinitionError(
                f"{where}: map_index_template must be a string (a template naming each mapped "
                f"instance), got {map_index_template!r}.")
        self.map_index_template = map_index_template
        if params is not None and not isinstance(params, Mapping):
            raise DagDefinitionError(f"{where}: params must be a dict, got {params!r}.")
        self.params = ParamsDict(params)
        check_params(self.params, where)
        self.doc_md = doc_md
        self.doc = doc
        self.do_xcom_push = bool(do_xcom_push)
        self.multiple_outputs = bool(multiple_outputs)
        self.on_execute_callback = to_callback_list(
            on_execute_callback, f"{where}: on_execute_callback"
        )
        self.on_success_callback = to_callback_list(
            on_success_callback, f"{where}: on_success_callback"
        )
        self.on_failure_callback = to_callback_list(
            on_failure_callback, f"{where}: on_failure_callback"
        )
        self.on_retry_callback = to_callback_list(on_retry_callback, f"{where}: on_retry_callback")
        self.on_skipped_callback = to_callback_list(
            on_skipped_callback, f"{where}: on_skipped_callback"
        )
        # Airflow's alert mails after a failed or retried try (statewright.sdk.email).
        self.email, self.email_on_failure, self.email_on_retry = email_args(
            email, email_on_failure, email_on_retry, where)
        # Prefect-style state hooks and result caching (statewright.sdk.hooks).
        self.on_state = to_state_hooks(on_state, f"{where}: on_state")
        self.on_state_change = to_callback_list(on_state_change, f"{where}: on_state_change")
        # Airflow's pre_execute= / post_execute= (run around execute by the runtime).
        self._pre_execute_hook = check_hook(pre_execute, f"{where}: pre_execute")
        self._post_execute_hook = check_hook(post_execute, f"{where}: post_execute")
        self.cache_key_fn, self.cache_expiration = check_cache_args(
            cache_key_fn, cache_expiration, where
        )
        self.outlets, self.inlets = _assets.task_asset_lists(outlets, inlets, where)
        self.upstream_task_ids: set[str] = set()
        self.downstream_task_ids: set[str] = set()

    def _finish_init(self) -> None:
        """Runs once, after the most derived ``__init__``: join the DAG, wire XComArg inputs."""
        if self._dag_requested is not None:
            self._dag_requested.add_task(self)
        del self._dag_requested
        for name in self.template_fields:
            for arg in iter_xcom_args(getattr(self, name, None)):
                self.set_upstream(arg)
        _setup_teardown.record(self)

    # -- mapping ------------------------------------------------------------------------------

    is_mapped: ClassVar[bool] = False

    def serialize_expand_input(self) -> dict[str, Any]:
        """The expand input of the mapped task group this task is in (the only way a plain
        operator is mapped: statewright.sdk.mappedtaskgroup)."""
        return self.__dict__["expand_input"].serialize()  # type: ignore[no-any-return]

    def unmap(self, context: Any) -> BaseOperator:
        """The operator a task instance of a mapped group runs: this one; its group's arguments
        resolve per map index when it runs."""
        return self

    @classmethod
    def partial(cls, **kwargs: Any) -> Any:
        """Fix arguments for every instance of a mapped task; then ``.expand(**mapped)`` or
        ``.expand_kwargs(...)`` (see statewright.sdk.mappedoperator)."""
        from statewright.sdk.mappedoperator import OperatorPartial

        return OperatorPartial(cls, kwargs)

    # -- execution ----------------------------------------------------------------------------

    @abc.abstractmethod
    def execute(self, context: Any) -> Any:
        """Do the work of one try. The return value is stored (it must be plain JSON data)."""

    def on_kill(self) -> None:
        """Called when the try is stopped (its execution_timeout passed); release what it holds."""

    def pre_execute(self, context: Any) -> Any:
        """Called right before ``execute`` (after a ``pre_execute=`` hook)."""

    def post_execute(self, context: Any, result: Any = None) -> Any:
        """Called right after ``execute`` returned ``result`` (after a ``post_execute=`` hook)."""

    # -- deferral -----------------------------------------------------------------------------

    def defer(
        self,
        *,
        trigger: Any,
        method_name: str,
        kwargs: dict[str, Any] | None = None,
        timeout: timedelta | float | None = None,
    ) -> NoReturn:
        """Free the worker until ``trigger`` fires; then ``method_name(context, event=...,
        **kwargs)`` runs in the same try. ``timeout`` bounds the wait (the try then fails)."""
        from statewright.sdk.exceptions import TaskDeferred

        if method_name != "__fail__" and not callable(getattr(self, method_name, None)):
            raise AttributeError(
                f"task {self.task_id!r}: defer(method_name={method_name!r}) names no method of "
                f"{type(self).__name__}; pass the name of the method to resume in"
            )
        raise TaskDeferred(trigger=trigger, method_name=method_name, kwargs=kwargs,
                           timeout=timeout)

    def resume_execution(
        self, next_method: str, next_kwargs: dict[str, Any] | None, context: Any
    ) -> Any:
        """Continue a deferred try: call ``next_method``; ``__fail__`` fails the try."""
        from statewright.sdk.exceptions import TaskDeferralError, TaskDeferralTimeout

        kwargs = dict(next_kwargs or {})
        if next_method == "__input__":  # pause_for_input: run again, with the responses
            context["ti"].hitl_responses = {**dict(kwargs.get("responses") or {}),
                                            str(kwargs.get("key")): kwargs.get("event")}
            return self.execute(context)
        if next_method == "__fail__":
            error = str(kwargs.get("error") or "the trigger failed")
            cls = TaskDeferralTimeout if kwargs.get("reason") == "timeout" else TaskDeferralError
            exc = cls(error)
            exc.trigger_traceback = kwargs.get("traceback")  # type: ignore[attr-defined]
            raise exc
        return getattr(self, next_method)(context, **kwargs)

    # -- attributes ---------------------------------------------------------------------------

    @property
    def task_display_name(self) -> str:
        """The name the UI and CLI show (Airflow's ``task_display_name``; the id by default)."""
        return getattr(self, "_task_display_name", None) or self.task_id

    @property
    def trigger_rule(self) -> TriggerRule:
        return self._trigger_rule

    @trigger_rule.setter
    def trigger_rule(self, value: str | TriggerRule) -> None:
        task_id = self.task_id
        try:
            rule = parse_trigger_rule(value)
        except DagDefinitionError as exc:
            raise DagDefinitionError(f"task {task_id!r}: {exc}") from None
        if self.is_teardown and rule is not TriggerRule.ALL_DONE_SETUP_SUCCESS:
            raise DagDefinitionError(
                f"task {task_id!r} is a teardown task: its trigger rule is "
                f"{TriggerRule.ALL_DONE_SETUP_SUCCESS.value} (it runs once everything before it "
                f"is done, if one of its setups succeeded) and cannot be set to {rule.value!r}."
            )
        if self._dag_or_none is not None:
            self._dag_or_none._check_fail_stop_rule(task_id, rule)
        self._trigger_rule = rule

    # -- setup and teardown ---------------------------------------------------------------------

    @property
    def is_setup(self) -> bool:
        """Whether this task is a setup task (it prepares what the work tasks after it use)."""
        return self._is_setup

    @is_setup.setter
    def is_setup(self, value: bool) -> None:
        value = check_bool(value, f"task {self.task_id!r}: is_setup")
        if value and self.is_teardown:
            raise DagDefinitionError(
                f"Cannot mark task {self.task_id!r} as setup; task is already a teardown."
            )
        self._is_setup = value

    @property
    def is_teardown(self) -> bool:
        """Whether this task is a teardown task (it releases what its setup tasks prepared)."""
        return self._is_teardown

    @is_teardown.setter
    def is_teardown(self, value: bool) -> None:
        value = check_bool(value, f"task {self.task_id!r}: is_teardown")
        if value and self.is_setup:
            raise DagDefinitionError(
                f"Cannot mark task {self.task_id!r} as teardown; task is already a setup."
            )
        if not value and self.on_failure_fail_dagrun:
            raise DagDefinitionError(
                f"task {self.task_id!r} has on_failure_fail_dagrun=True, which only a teardown "
                "task may have; set it to False first."
            )
        self._is_teardown = value
        if value:
            # As Airflow's as_teardown: a teardown runs once everything before it is done.
            self.trigger_rule = TriggerRule.ALL_DONE_SETUP_SUCCESS

    @property
    def on_failure_fail_dagrun(self) -> bool:
        """A teardown's failure fails the run only with this set (by default it is ignored)."""
        return self._on_failure_fail_dagrun

    @on_failure_fail_dagrun.setter
    def on_failure_fail_dagrun(self, value: bool) -> None:
        value = check_bool(value, f"task {self.task_id!r}: on_failure_fail_dagrun")
        if value and not self.is_teardown:
            raise DagDefinitionError(
                f"Cannot set task on_failure_fail_dagrun for {self.task_id!r} because it is not "
                "a teardown task: use as_teardown(on_failure_fail_dagrun=True) or "
                "@teardown(on_failure_fail_dagrun=True)."
            )
        self._on_failure_fail_dagrun = value

    def __enter__(self) -> _setup_teardown.SetupTeardownScope:
        """``with setup_task >> teardown_task:`` puts the tasks created inside between them."""
        return _setup_teardown.open_scope(self)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _setup_teardown.close_scope(failed=exc_type is not None)

    def as_setup(self) -> BaseOperator:
        """Make this a setup task; returns the task, so ``extract.as_setup() >> work`` reads."""
        self.is_setup = True
        return self

    def as_teardown(
        self,
        *,
        setups: DependencyMixin | Sequence[DependencyMixin] | None = None,
        on_failure_fail_dagrun: bool | None = None,
    ) -> BaseOperator:
        """Make this a teardown task (trigger rule ``all_done_setup_success``); returns the task.

        ``setups``: task(s) made setup tasks and set upstream of this one (``setup >> self``).
        ``on_failure_fail_dagrun=True``: this teardown's failure fails the run.
        """
        self.is_teardown = True
        if on_failure_fail_dagrun is not None:
            self.on_failure_fail_dagrun = on_failure_fail_dagrun
        if setups is not None:
            items = [setups] if isinstance(setups, DependencyMixin) else list(setups)
            for item in items:
                if not isinstance(item, DependencyMixin):
                    raise DagDefinitionError(
                        f"task {self.task_id!r}: as_teardown(setups=...) takes tasks or task "
                        f"outputs, got {item!r}."
                    )
                for setup_task in item.leaves:
                    setup_task.is_setup = True
                item >> self
        return self

    @property
    def _dag_or_none(self) -> DAG | None:
        return self.__dict__.get("_dag")

    @property
    def dag(self) -> DAG | None:
        """The DAG this task belongs to (``None`` until it is added to one)."""
        return self._dag_or_none

    @dag.setter
    def dag(self, dag: DAG) -> None:
        if not is_dag(dag):
            raise DagDefinitionError(
                f"task {self.task_id!r}: dag must be a DAG, got {type(dag).__name__}."
            )
        dag.add_task(self)

    @property
    def dag_id(self) -> str | None:
        return self.dag.dag_id if self.dag is not None else None

    @property
    def output(self) -> XComArg:
        """This task's return value, to pass to other tasks."""
        return XComArg(self)

    @property
    def task_type(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<Task({type(self).__name__}): {self.__dict__.get('task_id', '?')}>"

    # -- relationships ------------------------------------------------------------------------

    @property
    def roots(self) -> list[BaseOperator]:
        return [self]

    @property
    def leaves(self) -> list[BaseOperator]:
        return [self]

    def _add_relatives(
        self, other: DependencyMixin | Sequence[DependencyMixin], *, upstream: bool
    ) -> None:
        tasks = flatten_relatives(other, upstream=upstream)
        dag = common_dag([self, *tasks])
        for task in (self, *tasks):
            if task.dag is None:
                dag.add_task(task)
        for task in tasks:
            if task is self:
                raise DagDefinitionError(
                    f"task {self.task_id!r} in DAG {dag.dag_id!r} cannot depend on itself."
                )
            if upstream:
                self.upstream_task_ids.add(task.task_id)
                task.downstream_task_ids.add(self.task_id)
            else:
                self.downstream_task_ids.add(task.task_id)
                task.upstream_task_ids.add(self.task_id)

    def get_direct_relative_ids(self, upstream: bool = False) -> set[str]:
        return set(self.upstream_task_ids if upstream else self.downstream_task_ids)

    def get_direct_relatives(self, upstream: bool = False) -> list[BaseOperator]:
        return [
            self._require_dag().task_dict[i] for i in sorted(self.get_direct_relative_ids(upstream))
        ]

    @property
    def upstream_list(self) -> list[BaseOperator]:
        return self.get_direct_relatives(upstream=True)

    @property
    def downstream_list(self) -> list[BaseOperator]:
        return self.get_direct_relatives(upstream=False)

    def get_flat_relative_ids(self, upstream: bool = False) -> set[str]:
        """Every task reachable from this one going up (or down) the graph, itself excluded."""
        dag = self._require_dag()
        seen: set[str] = set()
        stack = list(self.get_direct_relative_ids(upstream))
        while stack:
            task_id = stack.pop()
            if task_id in seen:
                continue
            seen.add(task_id)
            stack.extend(dag.task_dict[task_id].get_direct_relative_ids(upstream))
        seen.discard(self.task_id)
        return seen

    def get_flat_relatives(self, upstream: bool = False) -> list[BaseOperator]:
        dag = self._require_dag()
        return [dag.task_dict[i] for i in sorted(self.get_flat_relative_ids(upstream))]

    def _require_dag(self) -> DAG:
        if self.dag is None:
            raise DagDefinitionError(
                f"task {self.task_id!r} belongs to no DAG: create it inside `with DAG(...)`, "
                "inside a @dag function, or pass dag=..."
            )
        return self.dag


BaseOperator.__init__ = _apply_defaults(BaseOperator.__init__)  # type: ignore[method-assign]
