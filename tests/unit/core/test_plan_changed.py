"""``plan_changed`` (the scheduler's evaluation of what changed) answers as ``plan_dependencies``
(the whole run) on random DAGs whose states changed after a pass that left nothing to do."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.core.scheduling import plan_changed, plan_dependencies
from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import TriggerRule


@st.composite
def _runs(draw: st.DrawFn) -> dict:
    n = draw(st.integers(2, 14))
    order = [f"t{i}" for i in range(n)]
    upstream = {t: sorted(draw(st.sets(st.sampled_from(order[:i]), max_size=3))) if i else []
                for i, t in enumerate(order)}
    rules = {t: draw(st.sampled_from(list(TriggerRule))) for t in order}
    setups = draw(st.sets(st.sampled_from(order), max_size=2))
    indirect = {t: sorted(s for s in setups if order.index(s) < i and s not in upstream[t])
                for i, t in enumerate(order) if draw(st.booleans())}
    blocked = frozenset(draw(st.sets(st.sampled_from(order), max_size=2)))
    states = {t: draw(st.sampled_from(list(TI))) for t in order}
    changes = draw(st.dictionaries(st.sampled_from(order), st.sampled_from(list(TI)),
                                   max_size=4))
    return dict(order=order, upstream=upstream, rules=rules, setups=setups,
                indirect={t: s for t, s in indirect.items() if s}, blocked=blocked,
                states=states, changes=changes)


def _plan(r: dict, states: dict[str, TaskInstanceState]) -> dict[str, TaskInstanceState]:
    return plan_dependencies(r["order"], r["upstream"], r["rules"], states, blocked=r["blocked"],
                             setups=r["setups"], indirect_setups=r["indirect"])


@settings(max_examples=400, deadline=None)
@given(_runs())
def test_what_changed_is_planned_as_the_whole_run(r: dict) -> None:
    states = dict(r["states"])
    while planned := _plan(r, states):  # the passes before: nothing is left to do
        states.update(planned)
    states.update(r["changes"])
    downstream: dict[str, list[str]] = defaultdict(list)
    for links in (r["upstream"], r["indirect"]):
        for t, ups in links.items():
            for u in ups:
                downstream[u].append(t)
    candidates = set(r["blocked"])  # weighed on every pass (their cause is outside the run)
    for t in r["changes"]:
        candidates |= {t, *downstream[t]}
    position = {t: i for i, t in enumerate(r["order"])}
    got = plan_changed(candidates, position, r["upstream"], downstream, r["rules"], states,
                       blocked=r["blocked"], setups=r["setups"], indirect_setups=r["indirect"])
    assert got == _plan(r, states)


def test_a_decision_reaches_down_a_chain_in_one_pass() -> None:
    order = ["a", "b", "c", "d"]
    upstream = {"b": ["a"], "c": ["b"], "d": ["c"]}
    down = {"a": ["b"], "b": ["c"], "c": ["d"]}
    rules = dict.fromkeys(order, TriggerRule.ALL_SUCCESS)
    states = {"a": TI.FAILED, "b": TI.NONE, "c": TI.NONE, "d": TI.NONE}
    got = plan_changed({"b"}, {t: i for i, t in enumerate(order)}, upstream, down, rules, states)
    assert got == dict.fromkeys(["b", "c", "d"], TI.UPSTREAM_FAILED)
    assert states["c"] is TI.NONE  # the caller's states are left as they were


def test_only_the_candidates_and_what_their_decisions_reach_are_weighed() -> None:
    order = ["a", "b", "x"]
    rules = dict.fromkeys(order, TriggerRule.ALL_SUCCESS)
    states = {"a": TI.SUCCESS, "b": TI.NONE, "x": TI.NONE}  # x has no upstream: would run
    got = plan_changed({"b"}, {t: i for i, t in enumerate(order)}, {"b": ["a"]},
                       {"a": ["b"]}, rules, states)
    assert got == {"b": TI.SCHEDULED}
