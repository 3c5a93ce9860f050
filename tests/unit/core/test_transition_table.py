"""The allowlist of edges, walked exhaustively."""

from __future__ import annotations

import itertools

import pytest

from statewright.core.errors import InvalidTransition
from statewright.core.states import RUN, RUN_TERMINAL, TI, TI_TERMINAL
from statewright.core.transitions import (
    DAG_RUN_EDGES,
    PEOPLE,
    SYSTEM,
    TASK_INSTANCE_EDGES,
    Actor,
    dag_run_edge,
    task_instance_edge,
)

# Written out by hand from the seed diagrams (state machines, DAG run lifecycle, deferral table).
SEED_TI_EDGES = {
    (TI.NONE, TI.SCHEDULED), (TI.NONE, TI.UPSTREAM_FAILED), (TI.NONE, TI.REMOVED),
    (TI.SCHEDULED, TI.QUEUED), (TI.SCHEDULED, TI.UPSTREAM_FAILED), (TI.SCHEDULED, TI.REMOVED),
    (TI.SCHEDULED, TI.RUNNING), (TI.QUEUED, TI.RUNNING),
    (TI.RUNNING, TI.SUCCESS), (TI.RUNNING, TI.FAILED), (TI.RUNNING, TI.UP_FOR_RETRY),
    (TI.RUNNING, TI.SKIPPED), (TI.RUNNING, TI.UP_FOR_RESCHEDULE), (TI.RUNNING, TI.DEFERRED),
    (TI.UP_FOR_RETRY, TI.SCHEDULED), (TI.UP_FOR_RESCHEDULE, TI.SCHEDULED),
    (TI.DEFERRED, TI.SCHEDULED), (TI.DEFERRED, TI.REMOVED), (TI.DEFERRED, TI.FAILED),
    (TI.DEFERRED, TI.NONE),
    (TI.SUCCESS, TI.RESTARTING), (TI.FAILED, TI.RESTARTING), (TI.SKIPPED, TI.RESTARTING),
    (TI.UPSTREAM_FAILED, TI.RESTARTING), (TI.RESTARTING, TI.SCHEDULED),
}
SEED_RUN_EDGES = {(RUN.QUEUED, RUN.RUNNING), (RUN.RUNNING, RUN.SUCCESS), (RUN.RUNNING, RUN.FAILED)}


def test_task_instance_states_are_airflows_fourteen_and_awaiting_input() -> None:
    assert len(TI) == 15
    assert TI.AWAITING_INPUT.value == "awaiting_input"
    assert set(RUN) == {"queued", "running", "paused", "success", "failed", "cancelled"}


@pytest.mark.parametrize(("frm", "to"), sorted(SEED_TI_EDGES))
def test_every_seed_task_instance_edge_is_allowed(frm: TI, to: TI) -> None:
    edge = TASK_INSTANCE_EDGES[(frm, to)]
    assert edge.seed
    actor = next(iter(edge.actors))
    assert task_instance_edge(frm, to, actor) is edge


@pytest.mark.parametrize(("frm", "to"), sorted(SEED_RUN_EDGES))
def test_every_seed_run_edge_is_allowed(frm: RUN, to: RUN) -> None:
    assert DAG_RUN_EDGES[(frm, to)].seed


def test_edges_marked_seed_are_exactly_the_seed_edges() -> None:
    assert {k for k, e in TASK_INSTANCE_EDGES.items() if e.seed} == SEED_TI_EDGES
    assert {k for k, e in DAG_RUN_EDGES.items() if e.seed} == SEED_RUN_EDGES


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(TI, TI)))
def test_every_other_task_instance_pair_is_rejected(frm: TI, to: TI) -> None:
    if (frm, to) in TASK_INSTANCE_EDGES:
        return
    for actor in Actor:
        with pytest.raises(InvalidTransition):
            task_instance_edge(frm, to, actor)


@pytest.mark.parametrize(("frm", "to"), list(itertools.product(RUN, RUN)))
def test_every_other_run_pair_is_rejected(frm: RUN, to: RUN) -> None:
    if (frm, to) in DAG_RUN_EDGES:
        return
    with pytest.raises(InvalidTransition):
        dag_run_edge(frm, to, Actor.USER)


def test_every_edge_carries_a_reason() -> None:
    for edges in (TASK_INSTANCE_EDGES, DAG_RUN_EDGES):
        for edge in edges.values():
            assert edge.reason.strip(), edge


@pytest.mark.parametrize("state", sorted(set(TI) - TI_TERMINAL))
def test_every_non_terminal_task_state_has_a_way_out_for_the_system(state: TI) -> None:
    outs = [e for (f, _), e in TASK_INSTANCE_EDGES.items() if f is state and e.actors & SYSTEM]
    assert outs, f"{state} would be stuck without a person"


@pytest.mark.parametrize("state", sorted(set(RUN) - RUN_TERMINAL - {RUN.PAUSED}))
def test_every_non_terminal_run_state_has_a_way_out_for_the_system(state: RUN) -> None:
    assert any(f is state and e.actors & SYSTEM for (f, _), e in DAG_RUN_EDGES.items())


def test_a_paused_run_is_left_by_a_person() -> None:
    outs = {t for (f, t) in DAG_RUN_EDGES if f is RUN.PAUSED}
    assert RUN.RUNNING in outs and RUN.CANCELLED in outs


@pytest.mark.parametrize("state", sorted(TI_TERMINAL))
def test_terminal_task_states_are_left_only_by_people(state: TI) -> None:
    for (f, t), e in TASK_INSTANCE_EDGES.items():
        if f is state and (f, t) != (TI.REMOVED, TI.NONE):
            assert e.actors <= PEOPLE, (f, t, e.actors)


@pytest.mark.parametrize("state", sorted(RUN_TERMINAL))
def test_terminal_run_states_are_left_only_by_people(state: RUN) -> None:
    for (f, _), e in DAG_RUN_EDGES.items():
        if f is state:
            assert e.actors <= PEOPLE


def test_a_worker_may_not_clear_a_task() -> None:
    with pytest.raises(InvalidTransition, match="Only"):
        task_instance_edge(TI.SUCCESS, TI.RESTARTING, Actor.WORKER)
