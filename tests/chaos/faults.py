"""Seeded fault plans and the loop that carries one out against a running deployment.

A plan is a list of timed faults drawn from ``random.Random(seed)``: the same seed gives the same
faults at the same offsets (``STATEWRIGHT_CHAOS_SEED`` replays a failed round). Kills are
``kill -9`` of one component's process; the component is started again after a short, drawn,
delay. A pause is ``SIGSTOP`` of a scheduler's whole process group for longer than the zombie
threshold plus the reaper's period (5 + 5 s), so that its tries are surely reaped and retried
elsewhere, then ``SIGCONT``: it wakes up with beliefs that are no longer true.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.chaos.deployment import Deployment


def chaos_seed() -> int:
    raw = os.environ.get("STATEWRIGHT_CHAOS_SEED")
    return int(raw) if raw else random.SystemRandom().randrange(1, 2**31)


def chaos_rounds(default: int = 1) -> int:
    return int(os.environ.get("STATEWRIGHT_CHAOS_ROUNDS") or default)


@dataclass(order=True)
class Fault:
    at: float
    kind: str  # kill | pause | postgres | broker | worker_mid_task
    target: str = ""
    restart_after: float = 0.0
    pause_for: float = 0.0


@dataclass
class Plan:
    seed: int
    faults: list[Fault] = field(default_factory=list)

    def describe(self) -> str:
        return "; ".join(f"{f.at:.1f}s {f.kind} {f.target}".strip() for f in self.faults)


def make_plan(seed: int, components: list[str], *, duration: float, kills: int = 20,
              pauses: tuple[str, ...] = ("scheduler-1",), pause_for: float = 12.0,
              postgres: bool = False, broker: bool = False, worker_mid_task: bool = False
              ) -> Plan:
    rng = random.Random(seed)
    targets = [c for c in components for _ in range(2)]  # each at least twice
    targets += [rng.choice(components) for _ in range(max(0, kills - len(targets)))]
    rng.shuffle(targets)
    plan = Plan(seed)
    slot = duration / (len(targets) + 1)
    for i, target in enumerate(targets):  # spread out, jittered: no two kills of one at once
        at = slot * (i + 0.5) + rng.uniform(0, slot * 0.8)
        plan.faults.append(Fault(at, "kill", target, restart_after=rng.uniform(0.2, 2.5)))
    for target in pauses:
        plan.faults.append(Fault(rng.uniform(0.2, 0.6) * duration, "pause", target,
                                 pause_for=pause_for))
    if postgres:
        plan.faults.append(Fault(rng.uniform(0.3, 0.7) * duration, "postgres"))
    if broker:
        plan.faults.append(Fault(rng.uniform(0.3, 0.7) * duration, "broker"))
    if worker_mid_task:
        plan.faults.append(Fault(rng.uniform(0.1, 0.5) * duration, "worker_mid_task",
                                 rng.choice([c for c in components if c.startswith("worker")]),
                                 restart_after=1.0))
    plan.faults.sort()
    return plan


@dataclass
class Hooks:
    restart_postgres: Callable[[], None] | None = None
    restart_broker: Callable[[], None] | None = None
    task_running_on: Callable[[str], bool] | None = None
    """Is a try running under this component now? (for the mid-task kill and the pause)"""
    paused_busy: list[str] = field(default_factory=list)
    """The components that were running a try when they were paused (filled in as it goes)."""


def carry_out(dep: Deployment, plan: Plan, hooks: Hooks, log: Callable[[str], Any] = print
              ) -> None:
    """Apply the plan in real time; restarts and resumes are scheduled as they come."""
    pending: list[tuple[float, str, str]] = [(f.at, "fault", str(i))
                                             for i, f in enumerate(plan.faults)]
    paused: set[str] = set()
    t0 = time.monotonic()
    while pending:
        pending.sort()
        at, what, arg = pending.pop(0)
        delay = at - (time.monotonic() - t0)
        if delay > 0:
            time.sleep(delay)
        now = time.monotonic() - t0
        if what == "start":
            if not dep.components[arg].alive:
                dep.start(arg)
            continue
        if what == "resume":
            dep.resume(arg)
            paused.discard(arg)
            log(f"{now:6.1f}s SIGCONT {arg}")
            continue
        f = plan.faults[int(arg)]
        if f.kind == "kill":
            if f.target in paused or not dep.components[f.target].alive:
                if f.target not in paused and not any(
                        w == "start" and a == f.target for _, w, a in pending):
                    dep.start(f.target)  # it exited by itself: start it, kill it once up
                    log(f"{now:6.1f}s {f.target} had exited; started again")
                pending.append((now + 0.5, "fault", arg))
                continue
            dep.kill(f.target)
            pending.append((now + f.restart_after, "start", f.target))
        elif f.kind == "pause":
            busy = hooks.task_running_on is None or hooks.task_running_on(f.target)
            if not dep.components[f.target].alive or (not busy and now - f.at < 15):
                pending.append((now + 0.2, "fault", arg))  # up again, and running a try
                continue
            dep.pause(f.target)
            if busy:
                hooks.paused_busy.append(f.target)
            paused.add(f.target)
            pending.append((now + f.pause_for, "resume", f.target))
        elif f.kind == "postgres" and hooks.restart_postgres:
            hooks.restart_postgres()
        elif f.kind == "broker" and hooks.restart_broker:
            hooks.restart_broker()
        elif f.kind == "worker_mid_task":
            waited = now - f.at
            if hooks.task_running_on and not hooks.task_running_on(f.target) and waited < 15:
                pending.append((now + 0.1, "fault", arg))  # until a try runs on it
                continue
            dep.kill_group(f.target)  # the machine is lost: its task processes go with it
            pending.append((now + f.restart_after, "start", f.target))
        log(f"{now:6.1f}s {f.kind} {f.target}".rstrip())
