"""Trigger rules: may a task instance start, given the states of its direct upstream tasks?

Mirrors Airflow 3's ``TriggerRuleDep`` (``airflow/ti_deps/deps/trigger_rule_dep.py``), function
``_evaluate_direct_relatives``, as the scheduler runs it (``flag_upstream_failed=True``). Airflow
evaluates a rule in two steps, and so does :func:`evaluate_trigger_rule`:

1. *Flag*: from the counts of finished upstreams, the rule may decide that the task can never run
   and set it to ``skipped`` or ``upstream_failed`` at once, even while other upstreams are still
   running (for example ``all_success`` with one failed upstream).
2. *Check*: otherwise the dependency is met (the task may be scheduled) or not yet met (wait).

When step 1 sets a state the task is never scheduled in that pass, even if step 2 would pass
(``DagRun._get_ready_tis`` keeps only task instances still in a schedulable state), so a flag wins.

Counting, as Airflow's ``_UpstreamTIStates.calculate`` does: ``done`` is the number of upstreams
in a finished state (success, skipped, failed, upstream_failed *and removed*); ``total`` is the
number of direct upstream tasks. A removed upstream therefore counts as done, but never as a
success: under ``all_success``, ``none_failed``, ``all_failed``, ``all_skipped`` and
``none_failed_min_one_success`` it blocks the task for ever (Airflow only subtracts removed
upstreams for mapped task instances).

Setup and teardown tasks (Airflow 2.7+): the rule ``all_done_setup_success``, which a teardown
task carries, and the *setup constraint* (``_evaluate_setup_constraint``) that makes a work task
wait for the setup tasks whose scope it is in even when they are not its direct upstreams: see
:func:`evaluate_dependencies`. Which setups are "relevant" to a task is a question about the graph,
answered by :mod:`statewright.core.setup_teardown`.

Timing: a decision is taken as soon as the upstream outcomes *seen so far* settle it, so the
order in which upstreams finish can change the outcome. With ``all_success`` over ``a`` and
``b``: ``a`` skipped first -> the task is skipped at once (while ``b`` still runs), and ``b``'s
later failure no longer changes it; ``b`` failed first -> ``upstream_failed``. A decided task is
never decided again (the scheduler only decides task instances still in ``none``).

A short-circuit's skip (:func:`reached_by_short_circuit`) does not reach a teardown task (as
Airflow's ``ShortCircuitOperator``) nor a task whose rule is ``always``: that rule has no
condition on its upstreams, so the task is started at once and runs whatever they do.

Left out on purpose:

- mapped tasks: the ``map_index``-dependent branches (``removed`` subtracted from the counts, the
  ``removed`` outcome for surplus map indexes) and mapped task groups' relevant upstreams;
- ``depends_on_past`` with ``wait_for_past_depends_before_skipping``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from statewright.core.errors import DagDefinitionError
from statewright.core.states import TaskInstanceState


class TriggerRule(StrEnum):
    """Airflow 3's trigger rules. ``all_done_setup_success`` is the rule of teardown tasks."""

    ALL_SUCCESS = "all_success"
    ALL_FAILED = "all_failed"
    ALL_DONE = "all_done"
    ALL_DONE_MIN_ONE_SUCCESS = "all_done_min_one_success"
    ALL_SKIPPED = "all_skipped"
    ONE_SUCCESS = "one_success"
    ONE_FAILED = "one_failed"
    ONE_DONE = "one_done"
    NONE_FAILED = "none_failed"
    NONE_FAILED_MIN_ONE_SUCCESS = "none_failed_min_one_success"
    NONE_SKIPPED = "none_skipped"
    ALWAYS = "always"
    ALL_DONE_SETUP_SUCCESS = "all_done_setup_success"


DEFAULT_TRIGGER_RULE = TriggerRule.ALL_SUCCESS

# Names that Airflow knows (or knew) but a statewright task may not carry, with what to do instead.
_HINTS: dict[str, str] = {
    "none_failed_or_skipped": "It was renamed; use none_failed_min_one_success.",
    "dummy": "It was renamed; use always.",
}


def parse_trigger_rule(value: object) -> TriggerRule:
    """Return ``value`` as a :class:`TriggerRule`; raise :class:`DagDefinitionError` if it is none.

    Accepts a member or its exact string value (as Airflow's ``TriggerRule.is_valid``).
    """
    if isinstance(value, TriggerRule):
        return value
    if isinstance(value, str):
        try:
            return TriggerRule(value)
        except ValueError:
            pass
    valid = ", ".join(rule.value for rule in TriggerRule)
    message = f"Invalid trigger rule {value!r}. Valid trigger rules: {valid}."
    hint = _HINTS.get(value) if isinstance(value, str) else None
    if hint:
        message += f" {hint}"
    raise DagDefinitionError(message)


@dataclass(frozen=True)
class UpstreamSummary:
    """Counts of a task instance's direct upstreams by finished state.

    ``total`` counts every direct upstream, finished or not; upstreams that are not finished appear
    only in ``total``. Mirrors Airflow's ``_UpstreamTIStates`` (plus the upstream count).

    The ``setup_*`` counts describe the direct upstreams that are *setup tasks* and are included
    in the counts above (as Airflow's ``setup_counter`` is included in its ``counter``):
    ``setup_total`` is the number of direct upstream setup tasks, finished or not;
    ``setup_success`` and ``setup_skipped`` count those that succeeded and were skipped. Only
    ``all_done_setup_success`` reads them.
    """

    success: int = 0
    skipped: int = 0
    failed: int = 0
    upstream_failed: int = 0
    removed: int = 0
    total: int = 0
    setup_success: int = 0
    setup_skipped: int = 0
    setup_total: int = 0

    def __post_init__(self) -> None:
        counts = {
            "success": self.success,
            "skipped": self.skipped,
            "failed": self.failed,
            "upstream_failed": self.upstream_failed,
            "removed": self.removed,
            "total": self.total,
            "setup_success": self.setup_success,
            "setup_skipped": self.setup_skipped,
            "setup_total": self.setup_total,
        }
        negative = [name for name, count in counts.items() if count < 0]
        if negative:
            raise ValueError(f"UpstreamSummary counts must not be negative: {', '.join(negative)}.")
        if self.done > self.total:
            raise ValueError(
                f"UpstreamSummary has {self.done} finished upstreams but total={self.total}; "
                "total must count every direct upstream."
            )
        if (
            self.setup_success > self.success
            or self.setup_skipped > self.skipped
            or self.setup_total > self.total
            or self.setup_success + self.setup_skipped > self.setup_total
        ):
            raise ValueError(
                "UpstreamSummary setup counts must be part of the overall counts: "
                f"setup_success={self.setup_success} (success={self.success}), "
                f"setup_skipped={self.setup_skipped} (skipped={self.skipped}), "
                f"setup_total={self.setup_total} (total={self.total})."
            )

    @property
    def done(self) -> int:
        """Finished upstreams, removed ones included (Airflow: ``sum(counter.values())``)."""
        return self.success + self.skipped + self.failed + self.upstream_failed + self.removed

    @property
    def all_done(self) -> bool:
        """Every direct upstream is finished (Airflow: ``upstream_done = done >= upstream``)."""
        return self.done >= self.total

    @classmethod
    def from_states(
        cls,
        states: Iterable[TaskInstanceState],
        setup_states: Iterable[TaskInstanceState] = (),
    ) -> UpstreamSummary:
        """Summarise the states of the direct upstream task instances (one state per upstream).

        ``setup_states`` are the states of those direct upstreams that are setup tasks: a part of
        ``states``, listed again.
        """
        state_list = list(states)
        setup_list = list(setup_states)
        counts = Counter(state_list)
        setup_counts = Counter(setup_list)
        return cls(
            success=counts[TaskInstanceState.SUCCESS],
            skipped=counts[TaskInstanceState.SKIPPED],
            failed=counts[TaskInstanceState.FAILED],
            upstream_failed=counts[TaskInstanceState.UPSTREAM_FAILED],
            removed=counts[TaskInstanceState.REMOVED],
            total=len(state_list),
            setup_success=setup_counts[TaskInstanceState.SUCCESS],
            setup_skipped=setup_counts[TaskInstanceState.SKIPPED],
            setup_total=len(setup_list),
        )


class DepDecision(StrEnum):
    """What the scheduler does with a task instance whose trigger rule it evaluated."""

    RUN = "run"  # dependencies met: the task instance may go none -> scheduled
    WAIT = "wait"  # not yet: evaluate again when an upstream finishes
    SKIP = "skip"  # -> skipped: the rule can never be met
    UPSTREAM_FAILED = "upstream_failed"  # -> upstream_failed: the rule can never be met


_Flag = Callable[[UpstreamSummary], DepDecision | None]
_Check = Callable[[UpstreamSummary], bool]


# -- step 1: flags (Airflow's ``if dep_context.flag_upstream_failed:`` branch) ------------------


def _flag_all_success(u: UpstreamSummary) -> DepDecision | None:
    if u.upstream_failed or u.failed:
        return DepDecision.UPSTREAM_FAILED
    if u.skipped:
        return DepDecision.SKIP
    return None


def _flag_all_failed(u: UpstreamSummary) -> DepDecision | None:
    return DepDecision.SKIP if u.success or u.skipped else None


def _flag_one_success(u: UpstreamSummary) -> DepDecision | None:
    if u.all_done and u.done == u.skipped:
        return DepDecision.SKIP
    if u.all_done and u.success <= 0:
        return DepDecision.UPSTREAM_FAILED
    return None


def _flag_one_failed(u: UpstreamSummary) -> DepDecision | None:
    return DepDecision.SKIP if u.all_done and not (u.failed or u.upstream_failed) else None


def _flag_one_done(u: UpstreamSummary) -> DepDecision | None:
    # upstream_failed and removed do not count as "done" for one_done.
    return DepDecision.SKIP if u.all_done and not (u.failed or u.success) else None


def _flag_none_failed(u: UpstreamSummary) -> DepDecision | None:
    return DepDecision.UPSTREAM_FAILED if u.upstream_failed or u.failed else None


def _flag_none_failed_min_one_success(u: UpstreamSummary) -> DepDecision | None:
    if u.upstream_failed or u.failed:
        return DepDecision.UPSTREAM_FAILED
    if u.skipped == u.total:
        return DepDecision.SKIP
    return None


def _flag_none_skipped(u: UpstreamSummary) -> DepDecision | None:
    return DepDecision.SKIP if u.skipped else None


def _flag_all_skipped(u: UpstreamSummary) -> DepDecision | None:
    return DepDecision.SKIP if u.success or u.failed or u.upstream_failed else None


def _flag_all_done_min_one_success(u: UpstreamSummary) -> DepDecision | None:
    # Skipped upstreams are not "done" for this rule: one skipped upstream skips the task at once.
    if u.skipped > 0:
        return DepDecision.SKIP
    if _non_skipped_done(u) >= u.total - u.skipped and u.success == 0:
        return DepDecision.UPSTREAM_FAILED
    return None


def _flag_all_done_setup_success(u: UpstreamSummary) -> DepDecision | None:
    # Only once every upstream is done, and only when the task has direct upstream setups:
    # all of them skipped -> skipped; none of them succeeded -> upstream_failed.
    if u.all_done and u.setup_total and u.setup_skipped >= u.setup_total:
        return DepDecision.SKIP
    if u.all_done and u.setup_total and u.setup_success == 0:
        return DepDecision.UPSTREAM_FAILED
    return None


def _flag_never(u: UpstreamSummary) -> DepDecision | None:
    return None


# -- step 2: checks (the failing-status branch after the flags) ----------------------------------


def _non_skipped_done(u: UpstreamSummary) -> int:
    return u.success + u.failed + u.upstream_failed + u.removed


def _check_all_done_min_one_success(u: UpstreamSummary) -> bool:
    return u.skipped == 0 and _non_skipped_done(u) >= u.total - u.skipped and u.success > 0


def _check_all_done_setup_success(u: UpstreamSummary) -> bool:
    # Every upstream done and, when there are direct upstream setups, at least one succeeded.
    return u.all_done and not (u.setup_total and not u.setup_success)


_FLAGS: dict[TriggerRule, _Flag] = {
    TriggerRule.ALL_SUCCESS: _flag_all_success,
    TriggerRule.ALL_FAILED: _flag_all_failed,
    TriggerRule.ALL_DONE: _flag_never,
    TriggerRule.ALL_DONE_MIN_ONE_SUCCESS: _flag_all_done_min_one_success,
    TriggerRule.ALL_SKIPPED: _flag_all_skipped,
    TriggerRule.ONE_SUCCESS: _flag_one_success,
    TriggerRule.ONE_FAILED: _flag_one_failed,
    TriggerRule.ONE_DONE: _flag_one_done,
    TriggerRule.NONE_FAILED: _flag_none_failed,
    TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS: _flag_none_failed_min_one_success,
    TriggerRule.NONE_SKIPPED: _flag_none_skipped,
    TriggerRule.ALWAYS: _flag_never,
    TriggerRule.ALL_DONE_SETUP_SUCCESS: _flag_all_done_setup_success,
}

_CHECKS: dict[TriggerRule, _Check] = {
    TriggerRule.ALL_SUCCESS: lambda u: u.total - u.success <= 0,
    TriggerRule.ALL_FAILED: lambda u: u.total - u.failed - u.upstream_failed <= 0,
    TriggerRule.ALL_DONE: lambda u: u.all_done,
    TriggerRule.ALL_DONE_MIN_ONE_SUCCESS: _check_all_done_min_one_success,
    TriggerRule.ALL_SKIPPED: lambda u: u.total - u.skipped <= 0,
    TriggerRule.ONE_SUCCESS: lambda u: u.success > 0,
    TriggerRule.ONE_FAILED: lambda u: bool(u.failed or u.upstream_failed),
    TriggerRule.ONE_DONE: lambda u: u.success + u.failed > 0,
    TriggerRule.NONE_FAILED: lambda u: u.total - u.success - u.skipped <= 0,
    TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS: lambda u: u.total - u.success - u.skipped <= 0,
    TriggerRule.NONE_SKIPPED: lambda u: u.all_done and u.skipped == 0,
    TriggerRule.ALWAYS: lambda u: True,
    TriggerRule.ALL_DONE_SETUP_SUCCESS: _check_all_done_setup_success,
}


def evaluate_trigger_rule(rule: TriggerRule, upstream: UpstreamSummary) -> DepDecision:
    """Airflow's trigger-rule decision for one task instance, as the scheduler makes it.

    Order of checks (``TriggerRuleDep._get_dep_statuses`` then ``_evaluate_direct_relatives``):
    no upstream -> RUN; ``always`` -> RUN; a flag (SKIP / UPSTREAM_FAILED) if the rule can no longer
    be met; otherwise RUN when the rule is met, else WAIT.
    """
    rule = parse_trigger_rule(rule)
    if upstream.total == 0 or rule is TriggerRule.ALWAYS:
        return DepDecision.RUN
    flagged = _FLAGS[rule](upstream)
    if flagged is not None:
        return flagged
    return DepDecision.RUN if _CHECKS[rule](upstream) else DepDecision.WAIT


def evaluate_setup_constraint(setups: UpstreamSummary) -> DepDecision:
    """Airflow's ``_evaluate_setup_constraint``: may a work task start, given its *indirect* setups?

    ``setups`` summarises the relevant setup tasks of a (non-teardown) task that are not its
    direct upstreams (:func:`statewright.core.setup_teardown.SetupTeardownGraph.indirect_setups`).
    One of them failed or upstream_failed -> UPSTREAM_FAILED, one skipped -> SKIP, at once (the
    others are not waited for); otherwise RUN once all of them succeeded, else WAIT.
    """
    if setups.upstream_failed or setups.failed:
        return DepDecision.UPSTREAM_FAILED
    if setups.skipped:
        return DepDecision.SKIP
    return DepDecision.RUN if setups.total - setups.success <= 0 else DepDecision.WAIT


def evaluate_dependencies(
    rule: TriggerRule,
    upstream: UpstreamSummary,
    indirect_setups: UpstreamSummary | None = None,
) -> DepDecision:
    """The scheduler's decision for one task instance: the setup constraint, then the rule.

    Mirrors ``TriggerRuleDep._get_dep_statuses``: a task without direct upstreams, or with the
    ``always`` rule, may run whatever its setups do. Otherwise, when the task has indirect setups
    (never for a teardown: the caller passes ``None``), the setup constraint is evaluated first; a
    SKIP or UPSTREAM_FAILED from it is final. Then the trigger rule over the direct upstreams: its
    flag (SKIP / UPSTREAM_FAILED) wins; the task runs only when both the constraint and the rule
    are met, else it waits.
    """
    rule = parse_trigger_rule(rule)
    if upstream.total == 0 or rule is TriggerRule.ALWAYS:
        return DepDecision.RUN
    constraint = DepDecision.RUN
    if indirect_setups is not None and indirect_setups.total:
        constraint = evaluate_setup_constraint(indirect_setups)
        if constraint in (DepDecision.SKIP, DepDecision.UPSTREAM_FAILED):
            return constraint
    decision = evaluate_trigger_rule(rule, upstream)
    if decision in (DepDecision.SKIP, DepDecision.UPSTREAM_FAILED):
        return decision
    if constraint is DepDecision.WAIT or decision is DepDecision.WAIT:
        return DepDecision.WAIT
    return DepDecision.RUN


def reached_by_short_circuit(rule: TriggerRule | str, *, is_teardown: bool) -> bool:
    """Whether a short-circuit's skip of the tasks after it reaches a task with ``rule``.

    A teardown is never skipped by it (Airflow's ``ShortCircuitOperator`` leaves teardowns out);
    neither is an ``always`` task, which depends on no upstream outcome: it was started with the
    run, and the finish order of its upstreams must not decide whether it runs.
    """
    return not is_teardown and parse_trigger_rule(rule) is not TriggerRule.ALWAYS
