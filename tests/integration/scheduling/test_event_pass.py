"""A pass woken only by tries that ended in runs the last probe saw running skips the probe: it
evaluates the runs of tasks with downstream tasks, and the runs of leaves that have nothing busy
left; any other wake-up reads the probe (``services.scheduler.event_pass``)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Engine, event, update
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.tables import dag_run, task_instance
from statewright.db.transition import ENTITY_RUN, ENTITY_TI, TransitionEvent
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.event_pass import EventRuns, EventScope

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _event(task_id: str | None, to: str, *, run_id: str = "r1",
           entity: str = ENTITY_TI) -> TransitionEvent:
    return TransitionEvent(entity, 1, "d", run_id, task_id, "running", to, to.title(), 1,
                           "worker", NOW)


def _scope(*, fail_stop: bool = False, depends_on_past: bool = False) -> EventScope:
    """A scope whose last probe saw run 7 (``d``/``r1``) of a DAG a >> b (b a leaf)."""
    view = SimpleNamespace(tasks={"a": SimpleNamespace(downstream=("b",)),
                                  "b": SimpleNamespace(downstream=())},
                           fail_stop=fail_stop, depends_on_past=depends_on_past)
    scope = EventScope()
    scope.remember([SimpleNamespace(id=7, dag_id="d", run_id="r1")], {"d": view})
    assert scope.take() is None  # the first pass reads the probe
    return scope


@pytest.mark.parametrize("to", ["success", "failed", "skipped", "upstream_failed"])
def test_an_upstream_that_ended_names_its_run(to: str) -> None:
    scope = _scope()
    scope.heard([_event("a", to)])
    assert scope.take() == EventRuns(evaluate={7: "d"})
    assert scope.take() is None  # taken: a pass with nothing heard reads the probe


@pytest.mark.parametrize("to", ["success", "failed", "skipped", "upstream_failed"])
def test_a_leaf_that_ended_names_its_run_to_look_at(to: str) -> None:
    scope = _scope()
    scope.heard([_event("b", to)])
    assert scope.take() == EventRuns(leaves={7: "d"})


def test_an_upstream_and_a_leaf_of_one_run() -> None:
    scope = _scope()
    scope.heard([_event("b", "success"), _event("a", "success")])
    assert scope.take() == EventRuns(evaluate={7: "d"}, leaves={7: "d"})


def test_a_leaf_that_failed_under_fail_stop_has_its_run_evaluated() -> None:
    scope = _scope(fail_stop=True)
    scope.heard([_event("b", "failed")])
    assert scope.take() == EventRuns(evaluate={7: "d"})
    scope.heard([_event("b", "success")])
    assert scope.take() == EventRuns(leaves={7: "d"})


def test_an_end_in_a_dag_with_depends_on_past_reads_the_probe() -> None:
    """It may let the next run's task instance go, which only the probe finds."""
    scope = _scope(depends_on_past=True)
    scope.heard([_event("a", "success")])
    assert scope.take() is None


@pytest.mark.parametrize("heard", [
    [_event("a", "up_for_retry")],  # time gives the retry its work
    [_event("a", "scheduled")],  # a trigger fired, a task was cleared …
    [_event("a", "success", run_id="r2")],  # a run the last probe did not see running
    [_event("gone", "success")],  # a task the view does not have
    [_event(None, "queued", entity=ENTITY_RUN)],  # a run created
    [_event("a", "success"), _event("b", "queued")],  # one of them needs the probe
])
def test_any_other_change_reads_the_probe(heard: list[TransitionEvent]) -> None:
    scope = _scope()
    scope.heard(heard)
    assert scope.take() is None


def test_a_wake_up_that_says_nothing_reads_the_probe() -> None:
    scope = _scope()
    scope.heard([_event("a", "success")])
    scope.need_probe()
    scope.heard([_event("a", "success")])  # heard while the probe is due: it will see it
    assert scope.take() is None
    assert scope.take() is None


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def _count(_conn: Any, _cursor: Any, stmt: str, *_args: Any) -> None:
        seen.append(" ".join(stmt.split()))

    event.listen(engine, "before_cursor_execute", _count)
    yield seen
    event.remove(engine, "before_cursor_execute", _count)


def _probes(statements: list[str]) -> int:
    """The probe's read of the running runs (the evaluation's claim of a run reads its hash too,
    by its key)."""
    return sum(1 for s in statements
               if "FROM dag_run" in s and "AS dag_hash" in s and "dag.kind" in s)


def _states(h: Any) -> dict[str, str]:
    return {t.task_id: t.state for t in h.tis("chain")}


@pytest.fixture
def chain(harness: Callable, engine: Engine) -> Iterator[Callable[..., tuple[Any, list[int]]]]:
    """A DAG a >> b >> c with runs ``run_ids`` triggered and every run's a queued (held by the
    executor), the scheduler listening to the door as its loop does. Returns the harness and the
    runs' keys."""
    made: list[Any] = []

    def make(*run_ids: str) -> tuple[Any, list[int]]:
        h = harness(NOW)
        # Extra steps never due after the first pass: whether a pass reads the probe does not
        # depend on how long the test takes.
        h.scheduler.config = dataclasses.replace(h.scheduler.config, steps_every=3600.0)
        with DAG("chain") as dag:
            NoopOperator(task_id="a") >> NoopOperator(task_id="b") >> NoopOperator(task_id="c")
        h.sync(dag)
        with transaction(engine) as conn:
            keys = [trigger_dag(conn, "chain", now=NOW, actor=Actor.USER, run_id=r)[0]
                    for r in run_ids or ("r1",)]
        h.executor.hold = True
        h.scheduler.listen()
        made.append(h)
        while len(h.executor.held) < len(keys):
            h.scheduler._pass()
        return h, keys

    yield make
    for h in made:
        h.scheduler._remove_listener()


def test_a_chain_link_is_scheduled_without_the_probe(chain: Callable,
                                                     statements: list[str]) -> None:
    h, _ = chain()
    statements.clear()
    h.executor.finish()  # a succeeds: its event reaches the scheduler's listener
    h.scheduler._pass()
    assert _states(h) == {"a": "success", "b": "queued", "c": "none"}
    assert _probes(statements) == 0

    # Woken by another process (``wake``): the probe, and nothing is lost.
    statements.clear()
    h.executor.finish()  # b succeeds …
    h.scheduler.wake()  # … and something else happened elsewhere
    h.scheduler._pass()
    assert _states(h)["c"] == "queued"
    assert _probes(statements) == 1

    # The leaf's end: one read finds nothing busy left, and the run's evaluation ends it.
    statements.clear()
    h.executor.finish()
    h.scheduler._pass()
    assert _probes(statements) == 0
    assert h.runs("chain")[0].state == "success"


def test_a_pass_after_the_idle_timer_reads_the_probe(chain: Callable,
                                                     statements: list[str]) -> None:
    h, _ = chain()  # idle_seconds 0: the wait times out at once
    h.executor.finish()
    h.scheduler._wake.clear()  # as if the pass had been taken: only the timer is left
    h.scheduler._wait()
    statements.clear()
    h.scheduler._pass()
    assert _probes(statements) == 1
    assert _states(h) == {"a": "success", "b": "queued", "c": "none"}


def test_a_run_the_event_pass_could_not_evaluate_is_looked_for_again(
        chain: Callable, engine: Engine, statements: list[str]) -> None:
    """A run named by an event that the pass did not evaluate (another scheduler holds it on
    PostgreSQL, or it ended meanwhile): the next pass reads the probe, even when events alone
    woke it."""
    h, (r1, _) = chain("r1", "r2")
    h.executor.finish()  # both runs' a succeed: the next pass is an event pass for both …
    with transaction(engine) as conn:  # … but r1 ends elsewhere, its wake-up not here yet
        conn.execute(update(dag_run).where(dag_run.c.id == r1).values(state="failed"))
    statements.clear()
    h.scheduler._pass()
    assert _probes(statements) == 0
    h.executor.finish()  # r2's b succeeds: an event pass would do, but r1 was not evaluated
    statements.clear()
    h.scheduler._pass()
    assert _probes(statements) == 1
    assert {(t.run_id, t.task_id): t.state for t in h.tis("chain")}[("r2", "c")] == "queued"


def test_a_big_runs_paced_evaluation_when_due_reads_the_probe(chain: Callable,
                                                              statements: list[str]) -> None:
    """A big run whose evaluation waits (``Scheduler._pace``) is found by the probe when its
    wait is over, not left until the next pass that reads it."""
    h, _ = chain()
    h.executor.finish()
    h.scheduler._evaluate_after[-1] = 0.0  # another run's wait, over
    statements.clear()
    h.scheduler._pass()
    assert _probes(statements) == 1
    assert _states(h)["b"] == "queued"


def _held(h: Any, dag: Any, *run_ids: str) -> list[int]:
    """Sync ``dag``, trigger ``run_ids`` (if any) and pass until the runs' first task instances
    are queued and held by the executor (the scheduler listening to the door as its loop
    does)."""
    h.scheduler.config = dataclasses.replace(h.scheduler.config, steps_every=3600.0)
    h.sync(dag)
    with transaction(h.engine) as conn:
        for r in run_ids:
            trigger_dag(conn, dag.dag_id, now=NOW, actor=Actor.USER, run_id=r)
    h.executor.hold = True
    h.scheduler.listen()
    for _ in range(5):
        h.scheduler._pass()
    return list(h.executor.held)


def _finish(h: Any, ids: list[int]) -> None:
    """End these held tries (success), leaving the other held ones queued."""
    rest = [i for i in h.executor.held if i not in ids]
    h.executor.held = list(ids)
    h.executor.finish()
    h.executor.held = rest


def test_a_fan_outs_leaves_end_their_run_without_the_probe(
        harness: Callable, engine: Engine, statements: list[str]) -> None:
    h = harness(NOW)
    with DAG("fan") as dag:
        for t in ("x", "y", "z"):
            NoopOperator(task_id=t)
    try:
        held = _held(h, dag, "r1")
        assert len(held) == 3
        statements.clear()
        _finish(h, held[:2])  # two leaves end; one is still queued: the run goes on
        h.scheduler._pass()
        assert _probes(statements) == 0
        assert h.runs("fan")[0].state == "running"
        statements.clear()
        _finish(h, held[2:])  # the last leaf: nothing busy is left, the run ends
        h.scheduler._pass()
        assert _probes(statements) == 0
        assert h.runs("fan")[0].state == "success"
    finally:
        h.scheduler._remove_listener()


def _hash_reads(statements: list[str]) -> int:
    """Reads of DAG hashes by DAG id (``dags.get_hashes``)."""
    return sum(1 for s in statements
               if s.startswith("SELECT") and "dag_hash" in s and "FROM dag " in s
               and "dag_id IN" in s)


def test_an_event_pass_queues_with_the_views_of_the_last_probe(
        harness: Callable, engine: Engine, statements: list[str]) -> None:
    """Slots freed by leaves that ended are filled in that pass without reading the DAG's hash
    again: the last probe's views decide the limits."""
    h = harness(NOW)
    h.executor.slots = 2
    with DAG("fan", max_active_tasks=2) as dag:
        for t in ("t1", "t2", "t3", "t4", "t5"):
            NoopOperator(task_id=t)
    try:
        first = _held(h, dag, "r1")
        assert len(first) == 2  # max_active_tasks
        statements.clear()
        _finish(h, first)
        h.scheduler._pass()
        assert _probes(statements) == 0 and _hash_reads(statements) == 0
        second = [i for i in h.executor.held if i not in first]
        assert len(second) == 2  # the freed slots, filled within the DAG's limit
        states = Counter(t.state for t in h.tis("fan"))
        assert states == {"success": 2, "queued": 2, "scheduled": 1}
    finally:
        h.scheduler._remove_listener()


def test_a_leaf_that_ends_a_depends_on_past_wait_lets_the_next_run_go(
        harness: Callable, engine: Engine, statements: list[str]) -> None:
    """r2's a waits for r1's a (``depends_on_past``): r1's a ending, a leaf, is found by the
    probe, which r2's waiting task instance needs."""
    h = harness(NOW)
    with DAG("past", schedule="@daily", start_date=NOW - timedelta(days=2), catchup=True) as dag:
        NoopOperator(task_id="a", depends_on_past=True)
    try:
        _held(h, dag)  # the schedule creates the runs
        runs = sorted(h.runs("past"), key=lambda r: r.logical_date)
        assert len(runs) == 2 and len(h.executor.held) == 1  # r2's a waits for r1's
        statements.clear()
        h.executor.finish()
        h.scheduler._pass()
        assert _probes(statements) == 1
        assert len(h.executor.held) == 1  # r2's a, queued in that pass
    finally:
        h.scheduler._remove_listener()


def _busy_reads(statements: list[str]) -> int:
    """Reads of whether any task instance of a run is still busy (``runs_without_states``:
    SQLite's ``NOT EXISTS``, PostgreSQL's per-run index probes)."""
    return sum(1 for s in statements
               if (s.startswith("SELECT dag_run.id") and "NOT (EXISTS" in s)
               or s.startswith("SELECT r.id, s.state FROM unnest"))


def _candidate_reads(statements: list[str]) -> int:
    """Reads of the scheduled task instances waiting to be queued, highest priority first
    (``scheduling.queue_candidates``)."""
    return sum(1 for s in statements if s.startswith("SELECT") and "priority_weight DESC" in s)


def _two_slots_of_five(h: Any, dag_id: str) -> list[int]:
    """A run of five leaves, an executor of two slots, the scheduler listening: passes until a
    queueing (a probed pass) fills the slots and leaves three scheduled. Returns the held."""
    h.executor.slots_available = lambda: 2 - len(h.executor.held)
    with DAG(dag_id) as dag:
        for t in ("t1", "t2", "t3", "t4", "t5"):
            NoopOperator(task_id=t)
    h.scheduler.config = dataclasses.replace(h.scheduler.config, steps_every=3600.0)
    h.sync(dag)
    with transaction(h.engine) as conn:
        trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r1")
    h.executor.hold = True
    h.scheduler.listen()
    for _ in range(5):
        h.scheduler._pass()
        if h.executor.held:
            break
    return list(h.executor.held)


def test_leaves_of_a_run_whose_queueing_left_candidates_need_no_read(
        harness: Callable, engine: Engine, statements: list[str]) -> None:
    """A fan-out wider than the executor's slots: while the last queueing left scheduled task
    instances in the run, the ends of its leaves fill the freed slots without reading whether
    the run is busy (or, on PostgreSQL, whether candidates wait); once none is left, the read
    comes back, and the last leaf ends the run."""
    h = harness(NOW)
    try:
        first = _two_slots_of_five(h, "wide")
        assert len(first) == 2
        statements.clear()
        _finish(h, first)  # three scheduled left behind by that queueing
        h.scheduler._pass()
        assert _probes(statements) == 0 and _busy_reads(statements) == 0
        assert _candidate_reads(statements) == 1  # the queueing's own, no read before it
        second = [i for i in h.executor.held if i not in first]
        assert len(second) == 2
        statements.clear()
        _finish(h, second)  # one scheduled left: the queueing takes it and leaves none
        h.scheduler._pass()
        assert _busy_reads(statements) == 0
        assert Counter(t.state for t in h.tis("wide")) == {"success": 4, "queued": 1}
        statements.clear()
        _finish(h, list(h.executor.held))  # the last leaf: the run is read, and it ends
        h.scheduler._pass()
        assert _probes(statements) == 0 and _busy_reads(statements) == 1
        assert h.runs("wide")[0].state == "success"
    finally:
        h.scheduler._remove_listener()


def test_a_probe_forgets_the_runs_a_queueing_left_waiting() -> None:
    """Another process may have changed those task instances: what the probe's pass queues
    says again."""
    scope = _scope()
    scope.left_waiting([7])
    assert scope.waiting() == {7}
    scope.remember([SimpleNamespace(id=7, dag_id="d", run_id="r1")],
                   {"d": SimpleNamespace(tasks={}, fail_stop=False, depends_on_past=False)})
    assert scope.waiting() == frozenset()


def test_a_run_whose_candidates_another_scheduler_took_is_probed_at_once(
        harness: Callable, engine: Engine, statements: list[str]) -> None:
    """The last queueing left candidates in the run, so the ends of its leaves are not read;
    another scheduler then queued and ran them (which wakes no other scheduler). The pass whose
    queueing finds none of them left wakes the loop for the probe at once, and the run ends
    then, not on the idle timer."""
    h = harness(NOW)
    try:
        ours = _two_slots_of_five(h, "taken")
        assert len(ours) == 2
        with transaction(engine) as conn:  # another scheduler's executor ran the other three
            conn.execute(update(task_instance).where(task_instance.c.state == "scheduled")
                         .values(state="success"))
        statements.clear()
        _finish(h, ours)
        h.scheduler._pass()
        assert _busy_reads(statements) == 0  # not read: the run was named
        assert h.scheduler._wake.is_set()  # … and its candidates were gone: probe now
        assert h.runs("taken")[0].state == "running"
        statements.clear()
        h.scheduler._pass()
        assert _probes(statements) == 1
        assert h.runs("taken")[0].state == "success"
    finally:
        h.scheduler._remove_listener()
