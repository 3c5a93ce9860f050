"""A distributed deployment in real processes: schedulers, triggerers, a DAG processor and (with
Celery) workers, each started by the CLI exactly as an operator starts it, each in its own
process group so that a fault can reach it alone and the teardown can reach all it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

STATEWRIGHT = [sys.executable, "-m", "statewright.cli.main"]
FERNET_KEY = "cNSRPAsdeYUfk1mPKfQsQEDf2bj2yz2c_Nqb9kVfJyM="

# Short thresholds so that a round of faults converges in seconds (documented defaults are longer).
CHAOS_SETTINGS = {
    "STATEWRIGHT_HEARTBEAT_SECONDS": "1",
    "STATEWRIGHT_ZOMBIE_THRESHOLD_SECONDS": "5",
    "STATEWRIGHT_QUEUED_TIMEOUT_SECONDS": "15",
    "STATEWRIGHT_TRIGGERER_HEALTH_THRESHOLD_SECONDS": "4",
    "STATEWRIGHT_DAG_PROCESSOR_INTERVAL_SECONDS": "2",
    "STATEWRIGHT_SCHEDULER_IDLE_SECONDS": "0.5",
    "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS": "2",
    "STATEWRIGHT_PARALLELISM": "6",
    "STATEWRIGHT_FERNET_KEY": FERNET_KEY,
}


@dataclass
class Component:
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    stops: int = 0
    groups: list[int] = field(default_factory=list)
    paused: set[int] = field(default_factory=set)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class Deployment:
    def __init__(self, root: Path, database_url: str, *, executor: str = "local",
                 broker_url: str | None = None, schedulers: int = 2, triggerers: int = 2,
                 workers: int = 2, extra_env: dict[str, str] | None = None) -> None:
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, **CHAOS_SETTINGS,
                    "STATEWRIGHT_HOME": str(root / "home"),
                    "STATEWRIGHT_DAGS_FOLDER": str(root / "dags"),
                    "STATEWRIGHT_DATABASE_URL": database_url,
                    "STATEWRIGHT_EXECUTOR": executor,
                    "STATEWRIGHT_CHAOS_MARKERS": str(root / "markers"),
                    **(extra_env or {})}
        if broker_url:
            self.env["STATEWRIGHT_CELERY_BROKER_URL"] = broker_url
        (root / "markers").mkdir(exist_ok=True)
        self.components: dict[str, Component] = {}
        for i in range(1, schedulers + 1):
            self._add(f"scheduler-{i}", ["scheduler"])
        for i in range(1, triggerers + 1):
            self._add(f"triggerer-{i}", ["triggerer"])
        self._add("dag-processor", ["dag-processor"])
        if executor == "celery":
            for i in range(1, workers + 1):
                self._add(f"worker-{i}", ["celery-worker", "--concurrency", "3",
                                          "--name", f"chaos-worker-{i}@%h"])

    def _add(self, name: str, args: list[str]) -> None:
        self.components[name] = Component(name, [*STATEWRIGHT, *args])

    def cli(self, *args: str, timeout: float = 120) -> str:
        out = subprocess.run([*STATEWRIGHT, *args], env=self.env, capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode:
            raise RuntimeError(f"statewright {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
        return out.stdout

    # -- processes --------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        c = self.components[name]
        with (self.logs / f"{name}.log").open("ab") as out:
            out.write(f"\n==== start {c.starts + 1} at {time.time():.3f}\n".encode())
            out.flush()
            c.process = subprocess.Popen(c.argv, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        c.groups.append(c.process.pid)
        c.starts += 1

    def start_all(self) -> None:
        for name in self.components:
            self.start(name)

    def kill(self, name: str) -> None:
        """``kill -9`` of the component's process (its children are left to notice alone)."""
        c = self.components[name]
        if c.alive:
            assert c.process is not None
            c.process.send_signal(signal.SIGKILL)
            c.process.wait(10)
            c.kills += 1

    def kill_group(self, name: str) -> None:
        """``kill -9`` of the component and every process it started (a machine lost)."""
        c = self.components[name]
        if c.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(c.process.pid, signal.SIGKILL)
            c.process.wait(10)
            c.kills += 1

    def pause(self, name: str) -> None:
        """``SIGSTOP`` of the component and every process below it (a frozen machine): its
        executor's supervisor and task processes may sit in process groups of their own."""
        c = self.components[name]
        assert c.process is not None
        c.paused = {c.process.pid, *descendants(c.process.pid)}
        for pid in c.paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        c.stops += 1

    def resume(self, name: str) -> None:
        c = self.components[name]
        for pid in c.paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        c.paused = set()

    def terminate_all(self, grace: float = 15.0) -> None:
        for c in self.components.values():
            self.resume(c.name)
            if c.alive:
                assert c.process is not None
                c.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for c in self.components.values():
            if c.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    c.process.wait(max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        """Kill whatever is left of every process group ever started (always runs)."""
        for c in self.components.values():
            self.resume(c.name)
            for pgid in c.groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGCONT)
                    os.killpg(pgid, signal.SIGKILL)
            if c.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    c.process.wait(5)

    def log_tail(self, chars: int = 6000) -> str:
        parts = []
        for name in self.components:
            text = (self.logs / f"{name}.log").read_text(errors="replace")
            errors = [line for line in text.splitlines()
                      if "Error" in line or "Traceback" in line or "failed" in line]
            c = self.components[name]
            status = ("alive" if c.alive else "never started" if c.process is None
                      else f"exited {c.process.returncode}")
            parts.append(f"--- {name} ({status}, started {c.starts}x): {len(errors)} error lines; "
                         f"last: {errors[-3:] if errors else '-'}; log ends: "
                         f"{text.splitlines()[-2:]}")
        return "\n".join(parts)[-chars:]


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (read from /proc)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parent[int(entry.name)] = int(stat[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found


def wait_for(pred: Callable[[], bool], timeout: float, what: str, every: float = 0.2) -> float:
    """Poll ``pred`` (a database read) until true; returns the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        with contextlib.suppress(Exception):
            if pred():
                return time.monotonic() - start
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
