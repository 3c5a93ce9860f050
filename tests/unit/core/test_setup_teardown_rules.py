"""Setup and teardown tasks in the pure core: the rule ``all_done_setup_success``, the setup
constraint, the run's effective leaves, ``fail_fast`` and the clearing selection.

The expectations restate Airflow's ``trigger_rule_dep.py`` (``_evaluate_direct_relatives`` for
``ALL_DONE_SETUP_SUCCESS``, ``_evaluate_setup_constraint``), ``DagRun._tis_for_dagrun_state`` and
``DAG.partial_subset``; the table of ``test_all_done_setup_success_as_airflows_tests`` is the one
of Airflow's ``test_teardown_tr_not_all_done``.
"""

from __future__ import annotations

import itertools

import pytest

from statewright.core.run_state import TaskView, decide_run_state, fail_stop_targets
from statewright.core.scheduling import plan_dependencies
from statewright.core.setup_teardown import SetupTeardownGraph
from statewright.core.states import DagRunState, TaskInstanceState
from statewright.core.trigger_rules import (
    DepDecision,
    TriggerRule,
    UpstreamSummary,
    evaluate_dependencies,
    evaluate_setup_constraint,
    evaluate_trigger_rule,
)

TI = TaskInstanceState
TR = TriggerRule
RUN, WAIT, SKIP = DepDecision.RUN, DepDecision.WAIT, DepDecision.SKIP
UF = DepDecision.UPSTREAM_FAILED
S, K, F, U, R = TI.SUCCESS, TI.SKIPPED, TI.FAILED, TI.UPSTREAM_FAILED, TI.REMOVED
OUTCOMES = (S, K, F, U, R, TI.RUNNING, TI.NONE)
FINISHED = {S, K, F, U, R}


def _teardown_rule(work: list[TaskInstanceState], setups: list[TaskInstanceState]) -> DepDecision:
    summary = UpstreamSummary.from_states([*work, *setups], setups)
    return evaluate_trigger_rule(TR.ALL_DONE_SETUP_SUCCESS, summary)


# -- all_done_setup_success -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("work", "setups", "decision"),
    [
        pytest.param([S, S], [], RUN, id="no setups"),
        pytest.param([S, S], [TI.RUNNING], WAIT, id="setup not done"),
        pytest.param([S, S], [F], UF, id="setup failed"),
        pytest.param([S, S], [U], UF, id="setup upstream_failed"),
        pytest.param([S, S], [F, S], RUN, id="one setup failed one success"),
        pytest.param([S, S], [S, TI.RUNNING], WAIT, id="one setup success one running"),
        pytest.param([S, S], [F, K], UF, id="one setup failed one skipped"),
        pytest.param([S, S], [K, K], SKIP, id="two setups both skipped"),
        pytest.param([S, S], [S], RUN, id="all success"),
        pytest.param([S, F], [S], RUN, id="work failed"),
        pytest.param([S, S], [K], SKIP, id="one setup; skipped"),
    ],
)
def test_all_done_setup_success_as_airflows_tests(
    work: list[TaskInstanceState], setups: list[TaskInstanceState], decision: DepDecision
) -> None:
    assert _teardown_rule(work, setups) is decision


def test_a_teardown_waits_for_its_work_even_when_its_setup_failed() -> None:
    # The flags apply only once every upstream is done: the teardown is not set
    # upstream_failed while a work task is still running.
    assert _teardown_rule([TI.RUNNING], [F]) is WAIT
    assert _teardown_rule([U], [F]) is UF


def _expected_teardown(
    work: tuple[TaskInstanceState, ...], setups: tuple[TaskInstanceState, ...]
) -> DepDecision:
    """Airflow's rule restated over outcomes: wait for every upstream; then, when there are
    direct upstream setups, all skipped -> skipped, none succeeded -> upstream_failed."""
    if not all(s in FINISHED for s in (*work, *setups)):
        return WAIT
    if setups and all(s is K for s in setups):
        return SKIP
    if setups and not any(s is S for s in setups):
        return UF
    return RUN


@pytest.mark.parametrize("n_setups", [1, 2])
def test_all_done_setup_success_against_every_outcome(n_setups: int) -> None:
    for work in itertools.product(OUTCOMES, repeat=1):
        for setups in itertools.product(OUTCOMES, repeat=n_setups):
            got = _teardown_rule(list(work), list(setups))
            assert got is _expected_teardown(work, setups), (work, setups, got)


def test_all_done_setup_success_without_setups_is_all_done() -> None:
    for outcomes in itertools.product(OUTCOMES, repeat=2):
        summary = UpstreamSummary.from_states(outcomes)
        assert evaluate_trigger_rule(TR.ALL_DONE_SETUP_SUCCESS, summary) is evaluate_trigger_rule(
            TR.ALL_DONE, summary
        )


def test_summary_counts_setups_inside_the_totals() -> None:
    summary = UpstreamSummary.from_states([S, K, F, TI.RUNNING], [S, K, TI.RUNNING])
    assert (summary.setup_success, summary.setup_skipped, summary.setup_total) == (1, 1, 3)
    assert (summary.success, summary.skipped, summary.total) == (1, 1, 4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"setup_success": 1, "total": 1},  # a setup success that is no success
        {"skipped": 1, "setup_skipped": 2, "setup_total": 2, "total": 2},
        {"setup_total": 2, "total": 1},
        {"success": 2, "setup_success": 2, "setup_total": 1, "total": 2},
        {"setup_total": -1},
    ],
)
def test_summary_rejects_impossible_setup_counts(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="UpstreamSummary"):
        UpstreamSummary(**kwargs)


# -- the setup constraint ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setups", "decision"),
    [
        ([S], RUN),
        ([S, S], RUN),
        ([TI.RUNNING], WAIT),
        ([S, TI.NONE], WAIT),
        ([F, TI.RUNNING], UF),  # a failure decides at once, without waiting for the others
        ([U], UF),
        ([K, TI.RUNNING], SKIP),
        ([K, F], UF),  # failure beats skip
        ([R], WAIT),  # a removed setup never succeeds
    ],
)
def test_setup_constraint(setups: list[TaskInstanceState], decision: DepDecision) -> None:
    assert evaluate_setup_constraint(UpstreamSummary.from_states(setups)) is decision


@pytest.mark.parametrize(
    ("rule", "direct", "indirect", "decision"),
    [
        # a work task below a running setup waits although its direct upstream succeeded
        (TR.ALL_SUCCESS, [S], [TI.RUNNING], WAIT),
        (TR.ALL_SUCCESS, [S], [S], RUN),
        # a failed indirect setup fails the task even under all_done
        (TR.ALL_DONE, [F], [F], UF),
        (TR.ALL_DONE, [S], [K], SKIP),
        # while the setup runs, the rule's own flag still applies at once
        (TR.ALL_SUCCESS, [F], [TI.RUNNING], UF),
        (TR.ALL_SUCCESS, [K], [TI.RUNNING], SKIP),
        # the rule waits although the setups succeeded
        (TR.ALL_SUCCESS, [TI.RUNNING], [S], WAIT),
        # always, and no direct upstream, run whatever the setups do
        (TR.ALWAYS, [TI.RUNNING], [F], RUN),
        (TR.ALL_SUCCESS, [], [TI.RUNNING], RUN),
    ],
)
def test_dependencies_combine_the_setup_constraint_and_the_rule(
    rule: TriggerRule,
    direct: list[TaskInstanceState],
    indirect: list[TaskInstanceState],
    decision: DepDecision,
) -> None:
    got = evaluate_dependencies(
        rule, UpstreamSummary.from_states(direct), UpstreamSummary.from_states(indirect)
    )
    assert got is decision


@pytest.mark.parametrize("rule", list(TriggerRule))
def test_without_indirect_setups_dependencies_are_the_trigger_rule(rule: TriggerRule) -> None:
    for outcomes in itertools.product(OUTCOMES, repeat=2):
        summary = UpstreamSummary.from_states(outcomes)
        assert evaluate_dependencies(rule, summary) is evaluate_trigger_rule(rule, summary)
        assert evaluate_dependencies(rule, summary, UpstreamSummary()) is evaluate_trigger_rule(
            rule, summary
        )


# -- planning a run ---------------------------------------------------------------------------

# create >> work1 >> work2 >> delete, create >> delete: work2 is in create's scope without
# being its direct downstream.
CHAIN_UP = {"create": [], "work1": ["create"], "work2": ["work1"], "delete": ["create", "work2"]}
CHAIN_DOWN = {"create": ["work1", "delete"], "work1": ["work2"], "work2": ["delete"], "delete": []}
CHAIN = SetupTeardownGraph(CHAIN_UP, CHAIN_DOWN, frozenset({"create"}), frozenset({"delete"}))
ORDER = ["create", "work1", "work2", "delete"]


def _plan(states: dict[str, TaskInstanceState], rules: dict[str, TriggerRule] | None = None,
          ) -> dict[str, TaskInstanceState]:
    all_rules = {"create": TR.ALL_SUCCESS, "work1": TR.ALL_SUCCESS, "work2": TR.ALL_SUCCESS,
                 "delete": TR.ALL_DONE_SETUP_SUCCESS, **(rules or {})}
    indirect = {t: CHAIN.indirect_setups(t) for t in ORDER}
    return plan_dependencies(ORDER, CHAIN_UP, all_rules, states, setups=CHAIN.setups,
                             indirect_setups=indirect)


def test_indirect_setups_of_the_chain() -> None:
    assert {t: set(CHAIN.indirect_setups(t)) for t in ORDER} == {
        "create": set(), "work1": set(), "work2": {"create"}, "delete": set()}


def test_a_failed_setup_fails_its_scope_and_its_teardown_in_one_pass() -> None:
    planned = _plan({"create": F, "work1": TI.NONE, "work2": TI.NONE, "delete": TI.NONE})
    assert planned == {"work1": U, "work2": U, "delete": U}


def test_a_skipped_setup_skips_its_scope_and_its_teardown() -> None:
    planned = _plan({"create": K, "work1": TI.NONE, "work2": TI.NONE, "delete": TI.NONE})
    assert planned == {"work1": K, "work2": K, "delete": K}


def test_a_failed_work_task_leaves_the_teardown_to_run() -> None:
    planned = _plan({"create": S, "work1": F, "work2": TI.NONE, "delete": TI.NONE})
    assert planned == {"work2": U, "delete": TI.SCHEDULED}


def test_a_cleared_work_task_waits_for_its_setup_to_run_again() -> None:
    # After clearing work2 (which also clears create and delete), work1 is still success: work2's
    # own rule is met, but the setup constraint holds it until create has succeeded again.
    states = {"create": TI.NONE, "work1": S, "work2": TI.NONE, "delete": TI.NONE}
    assert _plan(states) == {"create": TI.SCHEDULED}
    states["create"] = TI.RUNNING
    assert _plan(states) == {}
    states["create"] = S
    assert _plan(states) == {"work2": TI.SCHEDULED}


def test_the_setup_constraint_applies_under_other_rules() -> None:
    planned = _plan({"create": F, "work1": U, "work2": TI.NONE, "delete": TI.NONE},
                    rules={"work2": TR.ALL_DONE})
    assert planned["work2"] is U


# -- the graph --------------------------------------------------------------------------------


def _graph(edges: str, setups: str = "", teardowns: str = "", fail: str = "",
           ) -> SetupTeardownGraph:
    """``edges`` like "s>w w>t s>t"; task ids are single words."""
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    for edge in edges.split():
        a, b = edge.split(">")
        for n in (a, b):
            up.setdefault(n, [])
            down.setdefault(n, [])
        down[a].append(b)
        up[b].append(a)
    return SetupTeardownGraph(up, down, frozenset(setups.split()), frozenset(teardowns.split()),
                              frozenset(fail.split()))


def test_relevant_setups_are_those_whose_teardown_is_below() -> None:
    # s1's scope is w1 (its teardown t1 follows w1); s2 has no teardown, so it is relevant to
    # everything below it; w2 is after t1, outside s1's scope.
    g = _graph("s1>w1 w1>t1 s1>t1 t1>w2 s2>w1", setups="s1 s2", teardowns="t1")
    assert g.relevant_setups("w1") == {"s1", "s2"}
    assert g.relevant_setups("w2") == {"s2"}
    assert g.indirect_setups("w2") == {"s2"}
    assert g.indirect_setups("w1") == set()  # both are direct upstreams
    assert g.indirect_setups("t1") == set()  # a teardown has none


@pytest.mark.parametrize(
    ("edges", "setups", "teardowns", "fail", "leaves"),
    [
        # a work task followed only by its teardown is the leaf
        ("s>w w>t s>t", "s", "t", "", {"w"}),
        # unless the teardown fails the run
        ("s>w w>t s>t", "s", "t", "t", {"t"}),
        # a task with a non-teardown downstream is no leaf
        ("s>w w>x x>t s>t", "s", "t", "", {"x"}),
        # no teardown: the plain leaves
        ("a>b a>c", "", "", "", {"b", "c"}),
        # only teardowns: the plain leaves
        ("t1>t2", "", "t1 t2", "", {"t2"}),
        # nested scopes: s1 >> s2 >> w >> t2 >> t1
        ("s1>s2 s2>w w>t2 t2>t1 s1>t1 s2>t2", "s1 s2", "t1 t2", "", {"w"}),
    ],
)
def test_run_state_leaves(edges: str, setups: str, teardowns: str, fail: str,
                          leaves: set[str]) -> None:
    assert _graph(edges, setups, teardowns, fail).run_state_leaves() == leaves


def test_a_failed_teardown_is_ignored_by_the_run_state_unless_it_fails_the_run() -> None:
    states = [TaskView("s", S), TaskView("w", S), TaskView("t", F)]
    ignored = _graph("s>w w>t s>t", "s", "t").run_state_leaves()
    counted = _graph("s>w w>t s>t", "s", "t", fail="t").run_state_leaves()
    assert decide_run_state(states, ignored) is DagRunState.SUCCESS
    assert decide_run_state(states, counted) is DagRunState.FAILED
    # and a failed work task fails the run though its teardown succeeded
    failed_work = [TaskView("s", S), TaskView("w", F), TaskView("t", S)]
    assert decide_run_state(failed_work, ignored) is DagRunState.FAILED


def test_fail_stop_leaves_teardowns_alone() -> None:
    tis = [TaskView("s", S), TaskView("w1", F), TaskView("w2", TI.RUNNING),
           TaskView("w3", TI.NONE), TaskView("t", TI.NONE), TaskView("t2", TI.RUNNING)]
    assert fail_stop_targets(tis, teardown_task_ids={"t", "t2"}) == (["w2"], ["w3"])
    assert fail_stop_targets(tis) == (["w2", "t2"], ["w3", "t"])


# -- clearing (DAG.partial_subset) -------------------------------------------------------------

SIMPLE = "s1>w1 w1>t1 s1>t1"


@pytest.mark.parametrize(
    ("edges", "matched", "upstream", "downstream", "cleared"),
    [
        # Airflow's test_as_teardown_oneline (include_downstream=True, include_upstream=False)
        (SIMPLE, "s1", False, True, {"s1", "w1", "t1"}),
        (SIMPLE, "w1", False, True, {"s1", "w1", "t1"}),
        (SIMPLE, "t1", False, True, {"t1"}),
        # without --downstream: a work task brings its setup and teardown, a setup its teardown
        (SIMPLE, "w1", False, False, {"s1", "w1", "t1"}),
        (SIMPLE, "s1", False, False, {"s1", "t1"}),
        (SIMPLE, "t1", False, False, {"t1"}),
        # --upstream from the teardown: everything above it
        (SIMPLE, "t1", True, False, {"s1", "w1", "t1"}),
        # a work task outside the scope (after the teardown) brings nothing
        ("s1>w1 w1>t1 s1>t1 t1>w2", "w2", False, False, {"w2"}),
        # a setup without teardown is relevant to every task below it
        ("s1>w1 w1>w2", "w2", False, False, {"s1", "w2"}),
        # a setup whose teardown is not below the task is not relevant
        ("s1>w1 s1>t1 w0>w1", "w1", False, False, {"w1"}),
        # --downstream from a work task above a scope brings that scope's setup and teardown
        ("w0>w1 s1>w1 w1>t1 s1>t1", "w0", False, True, {"w0", "w1", "s1", "t1"}),
        # --upstream brings every upstream setup's teardowns, even outside the scope
        ("s1>w1 s1>t1 w1>w2", "w2", True, False, {"s1", "w1", "w2", "t1"}),
    ],
)
def test_clear_selection(edges: str, matched: str, upstream: bool, downstream: bool,
                         cleared: set[str]) -> None:
    g = _graph(edges, setups="s1", teardowns="t1")
    got = g.clear_selection(matched.split(), include_upstream=upstream,
                            include_downstream=downstream)
    assert got == cleared
