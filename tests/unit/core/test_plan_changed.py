"""``plan_changed`` (the scheduler's evaluation of what changed) answers as ``plan_dependencies``
(the whole run) on random DAGs whose states changed after a pass that left nothing to do."""

from __future__ import annotations

from collections import ChainMap, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.core.scheduling import plan_changed, plan_dependencies
from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import TriggerRule

_MOSTLY_DONE = st.sampled_from([TI.SUCCESS] * 8 + [TI.SKIPPED, TI.FAILED, TI.UPSTREAM_FAILED,
                                                   TI.RUNNING, TI.NONE, TI.REMOVED])
"""States for wide joins: with every state as likely, a task with 30 upstreams nearly always
has one unfinished and waits, whatever changed."""


@st.composite
def _runs(draw: st.DrawFn, tasks: tuple[int, int] = (2, 14), fan_in: int = 3,
          state: st.SearchStrategy[TaskInstanceState] | None = None) -> dict:
    state = state if state is not None else st.sampled_from(list(TI))
    n = draw(st.integers(*tasks))
    order = [f"t{i}" for i in range(n)]
    upstream = {t: sorted(draw(st.sets(st.sampled_from(order[:i]), max_size=fan_in))) if i
                else [] for i, t in enumerate(order)}
    rules = {t: draw(st.sampled_from(list(TriggerRule))) for t in order}
    setups = draw(st.sets(st.sampled_from(order), max_size=2))
    indirect = {t: sorted(s for s in setups if order.index(s) < i and s not in upstream[t])
                for i, t in enumerate(order) if draw(st.booleans())}
    blocked = frozenset(draw(st.sets(st.sampled_from(order), max_size=2)))
    states = {t: draw(state) for t in order}
    changes = draw(st.dictionaries(st.sampled_from(order), state, max_size=4))
    return dict(order=order, upstream=upstream, rules=rules, setups=setups,
                indirect={t: s for t, s in indirect.items() if s}, blocked=blocked,
                states=states, changes=changes)


def _plan(r: dict, states: dict[str, TaskInstanceState]) -> dict[str, TaskInstanceState]:
    return plan_dependencies(r["order"], r["upstream"], r["rules"], states, blocked=r["blocked"],
                             setups=r["setups"], indirect_setups=r["indirect"])


@settings(max_examples=400, deadline=None)
@given(_runs())
def test_what_changed_is_planned_as_the_whole_run(r: dict) -> None:
    _check(r)


@settings(max_examples=150, deadline=None)
@given(_runs(tasks=(10, 40), fan_in=30, state=_MOSTLY_DONE), st.booleans(), st.data())
def test_wide_joins_with_the_changes_layered_over_the_states_read(
        r: dict, layered: bool, data: st.DataObject) -> None:
    """Tasks with many upstreams (their states counted apart from the changes of the pass),
    the changes those a pass sees (unfinished task instances ending), and the states given as
    the scheduler gives them: this pass's changes over those read."""
    states = dict(r["states"])
    while planned := _plan(r, states):
        states.update(planned)
    unfinished = sorted(t for t, s in states.items() if s not in _ENDED and s is not TI.NONE)
    # Often all that run (else a join of many nearly always still waits for one), else some;
    # those in ``none`` wait for their upstreams and are weighed.
    ending = (unfinished if data.draw(st.booleans()) else
              data.draw(st.lists(st.sampled_from(unfinished), unique=True)) if unfinished
              else [])
    r = {**r, "states": states, "changes": {
        t: data.draw(st.sampled_from(sorted(_ENDED))) for t in ending}}
    _check(r, layered=layered)


_ENDED = {TI.SUCCESS, TI.SKIPPED, TI.FAILED, TI.UPSTREAM_FAILED, TI.REMOVED}


def _check(r: dict, *, layered: bool = False) -> None:
    states = dict(r["states"])
    while planned := _plan(r, states):  # the passes before: nothing is left to do
        states.update(planned)
    read = dict(states)
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
    given_states = ChainMap(dict(r["changes"]), read) if layered else states
    got = plan_changed(candidates, position, r["upstream"], downstream, r["rules"],
                       given_states, blocked=r["blocked"], setups=r["setups"],
                       indirect_setups=r["indirect"])
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


def test_a_wide_join_counts_each_upstream_change_wherever_it_sits() -> None:
    """A join below 20 tasks, all done but one, which this pass's changes end: wherever that
    one sits among the upstreams, the join is decided as over the whole run."""
    order = [f"u{i}" for i in range(20)] + ["join"]
    upstream = {t: [] for t in order[:-1]} | {"join": order[:-1]}
    downstream = {t: ["join"] for t in order[:-1]}
    position = {t: i for i, t in enumerate(order)}
    for rule in (TriggerRule.ALL_SUCCESS, TriggerRule.ALL_DONE, TriggerRule.ONE_FAILED):
        rules = {t: rule for t in order}
        for last in (0, 7, 19):
            read = {t: TI.SUCCESS for t in order[:-1]} | {f"u{last}": TI.RUNNING,
                                                          "join": TI.NONE}
            for ended in (TI.SUCCESS, TI.FAILED, TI.SKIPPED):
                changes = {f"u{last}": ended}
                got = plan_changed({f"u{last}", "join"}, position, upstream, downstream, rules,
                                   ChainMap(changes, read))
                assert got == plan_dependencies(order, upstream, rules, read | changes), \
                    (rule, last, ended)
                assert "join" in got, (rule, last, ended)  # each decides something
