"""The allowlist of state edges, each with the reason it exists and who may take it.

Edges drawn in the seed diagrams carry ``seed=True``; every other edge carries a one-line reason.
``statewright.db.transition`` (the one door) consults these tables before every state change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from statewright.core.errors import InvalidTransition
from statewright.core.states import (
    RUN,
    RUN_TERMINAL,
    TI,
    TI_TERMINAL,
    DagRunState,
    TaskInstanceState,
)


class Actor(StrEnum):
    """Who asked for a state change; recorded in the state history."""

    SCHEDULER = "scheduler"
    EXECUTOR = "executor"
    WORKER = "worker"
    TRIGGERER = "triggerer"
    DAG_PROCESSOR = "dag_processor"
    USER = "user"  # the CLI
    API = "api"  # the REST API / web UI


@dataclass(frozen=True)
class Person:
    """A person changing states, recorded by name: ``user:alice`` through the REST API or the
    web UI (edges as ``api``), ``cli:bob`` through the command line (edges as ``user``)."""

    kind: Actor
    name: str

    @property
    def value(self) -> str:
        prefix = "cli" if self.kind is Actor.USER else "user"
        return f"{prefix}:{self.name}"

    def __str__(self) -> str:
        return self.value


Who = Actor | Person
"""Who asks for a state change: a component, or a person by name."""


def kind_of(actor: Who) -> Actor:
    """The actor whose edges ``actor`` may take."""
    return actor.kind if isinstance(actor, Person) else actor


SYSTEM: frozenset[Actor] = frozenset(
    {Actor.SCHEDULER, Actor.EXECUTOR, Actor.WORKER, Actor.TRIGGERER, Actor.DAG_PROCESSOR}
)
PEOPLE: frozenset[Actor] = frozenset({Actor.USER, Actor.API})
ANYONE: frozenset[Actor] = SYSTEM | PEOPLE
RECOVERERS: frozenset[Actor] = frozenset({Actor.WORKER, Actor.SCHEDULER})
"""Who finds a flow run's process dead: its recorder, or the scheduler (no heartbeat)."""


S = TypeVar("S", TaskInstanceState, DagRunState)


@dataclass(frozen=True)
class Edge(Generic[S]):
    frm: S
    to: S
    reason: str
    actors: frozenset[Actor] = ANYONE
    seed: bool = False


def _ti(
    frm: TI, to: TI, reason: str, actors: frozenset[Actor] = SYSTEM, seed: bool = False
) -> Edge[TaskInstanceState]:
    return Edge(frm, to, reason, actors, seed)


_T = TI
_SEED_TI: list[Edge[TaskInstanceState]] = [
    _ti(_T.NONE, _T.SCHEDULED, "dependencies met", seed=True),
    _ti(_T.NONE, _T.UPSTREAM_FAILED, "upstream failed", seed=True),
    _ti(_T.NONE, _T.REMOVED, "task removed from the DAG", seed=True),
    _ti(_T.SCHEDULED, _T.QUEUED, "sent to the executor", seed=True),
    _ti(_T.SCHEDULED, _T.UPSTREAM_FAILED, "upstream failed", seed=True),
    _ti(_T.SCHEDULED, _T.REMOVED, "task removed from the DAG", seed=True),
    _ti(_T.SCHEDULED, _T.RUNNING, "worker resumes a deferred task (execute_complete)", seed=True),
    _ti(_T.QUEUED, _T.RUNNING, "worker starts the try", seed=True),
    _ti(_T.RUNNING, _T.SUCCESS, "task succeeded", seed=True),
    _ti(_T.RUNNING, _T.FAILED, "task failed, no retries left", seed=True),
    _ti(_T.RUNNING, _T.UP_FOR_RETRY, "task failed, retries left", seed=True),
    _ti(_T.RUNNING, _T.SKIPPED, "task skipped itself", seed=True),
    _ti(_T.RUNNING, _T.UP_FOR_RESCHEDULE, "sensor in reschedule mode", seed=True),
    _ti(_T.RUNNING, _T.DEFERRED, "task deferred to a trigger", seed=True),
    _ti(_T.UP_FOR_RETRY, _T.SCHEDULED, "retry delay expired", seed=True),
    _ti(_T.UP_FOR_RESCHEDULE, _T.SCHEDULED, "reschedule date reached", seed=True),
    _ti(_T.DEFERRED, _T.SCHEDULED, "trigger fired, timed out or failed", seed=True),
    _ti(_T.DEFERRED, _T.REMOVED, "task removed from the DAG", seed=True),
    _ti(_T.DEFERRED, _T.FAILED, "trigger failed", seed=True),
    _ti(_T.DEFERRED, _T.NONE, "cleared while deferred", PEOPLE, seed=True),
    _ti(_T.SUCCESS, _T.RESTARTING, "cleared by a user", PEOPLE, seed=True),
    _ti(_T.FAILED, _T.RESTARTING, "cleared by a user", PEOPLE, seed=True),
    _ti(_T.SKIPPED, _T.RESTARTING, "cleared by a user", PEOPLE, seed=True),
    _ti(_T.UPSTREAM_FAILED, _T.RESTARTING, "cleared by a user", PEOPLE, seed=True),
    _ti(_T.RESTARTING, _T.SCHEDULED, "rescheduled after a clear", seed=True),
]

_EXTRA_TI: list[Edge[TaskInstanceState]] = [
    _ti(_T.NONE, _T.SKIPPED, "upstream skipped under its trigger rule, or a branch skipped it"),
    _ti(_T.SCHEDULED, _T.SKIPPED, "a branch / short-circuit decision skipped it"),
    _ti(_T.NONE, _T.FAILED, "a mapped task cannot expand (not a list or dict, or too long), or "
        "a flow run crashed before its called task started (Crashed)"),
    _ti(_T.QUEUED, _T.SCHEDULED, "executor lost the task, or it sat queued past the timeout"),
    _ti(_T.QUEUED, _T.FAILED, "the try could not start (DAG file failed to load, or starting "
        "it alone raised), no retries"),
    _ti(_T.QUEUED, _T.UP_FOR_RETRY, "the try could not start (DAG file failed to load)"),
    _ti(_T.RUNNING, _T.RESTARTING, "cleared while running: the try is killed", PEOPLE),
    _ti(_T.RUNNING, _T.SHUTDOWN, "cancel requested: the try is being killed"),
    _ti(_T.RESTARTING, _T.NONE, "a cleared try has stopped; dependencies are re-evaluated"),
    _ti(_T.SHUTDOWN, _T.FAILED, "the killed try ended: failed (Cancelled / Crashed)"),
    _ti(_T.SHUTDOWN, _T.UP_FOR_RETRY, "the try was shut down by the infrastructure, retries left"),
    _ti(_T.SHUTDOWN, _T.SCHEDULED, "a worker shut down gracefully before the try began"),
    _ti(_T.REMOVED, _T.NONE, "the task is back in the DAG"),
    _ti(_T.DEFERRED, _T.SUCCESS, "the trigger ended the task itself (end_from_trigger)",
        frozenset({Actor.TRIGGERER})),
    _ti(_T.NONE, _T.SUCCESS, "an empty task (EmptyOperator) has nothing to run: the "
        "scheduler sets it to success (or a user marked it success)", frozenset({Actor.SCHEDULER})),
    # Clearing unfinished task instances puts them back to none (Airflow's clear).
    *[
        _ti(s, _T.NONE, "cleared by a user", PEOPLE)
        for s in (_T.SCHEDULED, _T.QUEUED, _T.UP_FOR_RETRY, _T.UP_FOR_RESCHEDULE, _T.SHUTDOWN)
    ],
    # fail_stop and cancel end every unfinished, not running task as skipped.
    *[
        _ti(s, _T.SKIPPED, "run stopped (fail_stop or cancel) before the task ran", ANYONE)
        for s in (
            _T.QUEUED,
            _T.UP_FOR_RETRY,
            _T.UP_FOR_RESCHEDULE,
            _T.DEFERRED,
            _T.RESTARTING,
            _T.SHUTDOWN,
        )
    ],
    # A task removed from the DAG while it waits.
    *[
        _ti(s, _T.REMOVED, "task removed from the DAG")
        for s in (_T.UP_FOR_RETRY, _T.UP_FOR_RESCHEDULE)
    ],
    # A zombie (no heartbeat from its worker) or a worker that died under it.
    _ti(_T.QUEUED, _T.SHUTDOWN, "cancel requested while queued"),
    # People's run controls (services/controls).
    _ti(_T.RUNNING, _T.SHUTDOWN, "a user cancelled the run: the try is being killed", PEOPLE),
    _ti(_T.RESTARTING, _T.NONE, "cleared with no try running: re-evaluated at once", PEOPLE),
    _ti(_T.QUEUED, _T.SCHEDULED, "run paused before the try started: back to the scheduler",
        PEOPLE),
    # A flow's task runs (statewright.flows) start when the flow calls them, in its process.
    _ti(_T.NONE, _T.RUNNING, "a flow called the task: it runs at once in the flow's process"),
    _ti(_T.RUNNING, _T.RUNNING, "a flow's task retries at once (no delay): Running → Retrying"),
    _ti(_T.UP_FOR_RETRY, _T.RUNNING, "a flow's task retries in the flow's process after its delay"),
    _ti(_T.FAILED, _T.NONE, "a person resumes a crashed durable flow run: its task calls that "
        "did not complete run again", PEOPLE),
    # Human in the loop (Airflow 3.3's awaiting_input): no process, no slot, no trigger.
    _ti(_T.RUNNING, _T.AWAITING_INPUT,
        "the task asked a person for input: its process ends, it holds no slot"),
    _ti(_T.AWAITING_INPUT, _T.SCHEDULED,
        "a person responded, or the response timeout passed (defaults or a timeout error): "
        "the try resumes in its continuation", ANYONE),
    _ti(_T.AWAITING_INPUT, _T.NONE, "cleared while awaiting input", PEOPLE),
    _ti(_T.AWAITING_INPUT, _T.REMOVED, "task removed from the DAG"),
    _ti(_T.AWAITING_INPUT, _T.SKIPPED, "run stopped (fail_stop or cancel) while awaiting input",
        ANYONE),
]


def _mark_edges() -> list[Edge[TaskInstanceState]]:
    edges = []
    for target in (_T.SUCCESS, _T.FAILED, _T.SKIPPED):
        for s in TI:
            if s is not target:
                edges.append(_ti(s, target, f"marked {target.value} by a user", PEOPLE))
    return edges


def _merge(edges: list[Edge[S]]) -> dict[tuple[S, S], Edge[S]]:
    table: dict[tuple[S, S], Edge[S]] = {}
    for e in edges:
        key = (e.frm, e.to)
        if key in table:
            old = table[key]
            table[key] = Edge(
                old.frm, old.to, old.reason, old.actors | e.actors, old.seed or e.seed
            )
        else:
            table[key] = e
    return table


TASK_INSTANCE_EDGES: dict[tuple[TaskInstanceState, TaskInstanceState], Edge[TaskInstanceState]]
TASK_INSTANCE_EDGES = _merge(_SEED_TI + _EXTRA_TI + _mark_edges())


def _run(
    frm: RUN, to: RUN, reason: str, actors: frozenset[Actor] = SYSTEM, seed: bool = False
) -> Edge[DagRunState]:
    return Edge(frm, to, reason, actors, seed)


_R = RUN
_RUN_EDGES: list[Edge[DagRunState]] = [
    _run(_R.QUEUED, _R.RUNNING, "scheduler starts the run", seed=True),
    _run(_R.RUNNING, _R.SUCCESS, "all leaves succeeded or were skipped", ANYONE, seed=True),
    _run(_R.RUNNING, _R.FAILED, "a leaf failed, or a task failed under fail_stop", ANYONE, True),
    _run(_R.RUNNING, _R.PAUSED, "paused by a user: no new task starts", PEOPLE),
    _run(_R.QUEUED, _R.PAUSED, "paused by a user before it started", PEOPLE),
    _run(_R.PAUSED, _R.RUNNING, "resumed by a user", PEOPLE),
    _run(_R.PAUSED, _R.QUEUED, "resumed by a user before it started", PEOPLE),
    *[
        _run(s, _R.CANCELLED, "cancelled by a user", PEOPLE)
        for s in (_R.QUEUED, _R.RUNNING, _R.PAUSED)
    ],
    # A flow run (statewright.flows) decides its own final state and its pauses.
    _run(_R.RUNNING, _R.CANCELLED, "a flow returned a Cancelled state"),
    _run(_R.RUNNING, _R.PAUSED, "a flow paused itself (pause_flow_run / suspend_flow_run)"),
    _run(_R.PAUSED, _R.FAILED, "a paused flow was not resumed within its timeout, or crashed"),
    _run(_R.QUEUED, _R.FAILED, "a flow run's process crashed before the flow started"),
    *[
        _run(s, _R.QUEUED, "tasks cleared: the run starts again", PEOPLE)
        for s in (_R.SUCCESS, _R.FAILED, _R.CANCELLED)
    ],
    _run(_R.RUNNING, _R.QUEUED, "a durable flow run's process died and its flow's retries are "
         "not used up: queued to resume where it stopped", RECOVERERS),
    *[
        _run(s, t, f"marked {t.value} by a user", PEOPLE)
        for t in (_R.SUCCESS, _R.FAILED)
        for s in RUN
        if s is not t
    ],
]

DAG_RUN_EDGES: dict[tuple[DagRunState, DagRunState], Edge[DagRunState]] = _merge(_RUN_EDGES)


def task_instance_edge(
    frm: TaskInstanceState, to: TaskInstanceState, actor: Who
) -> Edge[TaskInstanceState]:
    """Return the edge or raise ``InvalidTransition``."""
    edge = TASK_INSTANCE_EDGES.get((TI(frm), TI(to)))
    if edge is None:
        raise InvalidTransition("task instance", str(frm), str(to), str(actor))
    if kind_of(actor) not in edge.actors:
        raise InvalidTransition(
            "task instance", str(frm), str(to), str(actor),
            f"Only {sorted(a.value for a in edge.actors)} may take it ({edge.reason}).",
        )
    return edge


def dag_run_edge(frm: DagRunState, to: DagRunState, actor: Who) -> Edge[DagRunState]:
    edge = DAG_RUN_EDGES.get((RUN(frm), RUN(to)))
    if edge is None:
        raise InvalidTransition("dag run", str(frm), str(to), str(actor))
    if kind_of(actor) not in edge.actors:
        raise InvalidTransition(
            "dag run", str(frm), str(to), str(actor),
            f"Only {sorted(a.value for a in edge.actors)} may take it ({edge.reason}).",
        )
    return edge


def is_terminal_ti(state: TaskInstanceState) -> bool:
    return TI(state) in TI_TERMINAL


def is_terminal_run(state: DagRunState) -> bool:
    return RUN(state) in RUN_TERMINAL
