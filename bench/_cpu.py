"""CPU seconds of every process a benchmark involves, and the host's speed beside them.

Wall figures move several-fold between machines and with other work on the same machine;
the CPU a task instance costs does much less. ``CpuMeter`` measures, between ``__enter__`` and
``__exit__``, the CPU (user + system) of:

- this process (less the meter's own sampling thread);
- every descendant process, also short-lived ones. The total is exact by accounting rather than
  by sampling: a process the benchmark (or one of its children) reaps adds its whole life to its
  reaper's ``RUSAGE_CHILDREN`` / ``cutime`` (read with ``resource.getrusage`` for this process and
  from ``/proc/<pid>/stat`` for live ones), and the processes still alive (or zombies) at the end
  are read from ``/proc``. This process makes itself a *child subreaper*
  (``PR_SET_CHILD_SUBREAPER``), so a grandchild orphaned by its parent's exit (the LocalExecutor's
  forkserver when a scheduler process ends) is re-parented here and its CPU is not lost;
- the PostgreSQL server's backends that serve the tree's connections, when ``database_url``
  is ``postgresql://…`` on this host (``postgresql``): a backend's title names its client
  (``postgres: … 127.0.0.1(<client port>) …``) and the port is one of a socket of the tree; each
  such backend counts its CPU at its last sample (connection pools keep them for the run, so
  little is lost). ``postgresql_server`` beside it (not added to ``cpu_s``) is the whole server
  that served them: the postmaster, its live children and, through the postmaster's ``cutime``,
  every ended backend; on a server nothing else uses, the difference is the server's own
  background work (WAL writer, checkpointer, autovacuum), on a shared one it is others' work.

The split per role (``cpu_s_by_role``: bench, scheduler, supervisor, tasks, triggerer,
postgresql, …; a process's own name, ``COMM_ROLES``, before its command line) comes
from a thread sampling the process tree every ``interval`` seconds; each process counts its own
CPU at its last sample, so a process that lived less than one interval goes to ``unsampled``
(``cpu_s`` itself does not depend on the sampling). Linux only (``/proc``).

``host_speed()`` times a fixed pure-Python loop (10 million additions) once per run, before
the first meter starts: the host's single-core speed, printed beside the figures with the load
average. Compare ``cpu_ms_per_*`` across machines (scaled by ``host_loop_cpu_s``); compare wall
figures only within one session (``bench/compare.sh``).
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
# cmdline fragment → role; the first that matches wins, else the parent's role.
DEFAULT_ROLES: tuple[tuple[str, str], ...] = (
    ("multiprocessing.forkserver", "tasks"),
    ("statewright.services.worker", "tasks"),
    ("triggerer", "triggerer"),
    ("scheduler", "scheduler"),
    ("dag-processor", "dag_processor"),
)
# A process's own name (``comm``; the worker's processes name themselves) → role: a local
# executor's supervisor and its task processes share the fork server's command line.
COMM_ROLES = {"sw-supervisor": "supervisor", "sw-task": "tasks"}
_HOST: dict[str, Any] = {}


def host_speed() -> dict[str, Any]:
    """``host_loop_s``: seconds of 10 million Python additions (once per run), with the CPU
    seconds they took (``host_loop_cpu_s``: the core's speed, less moved by other work; the
    wall figure over it is the share of a core this process got); the load average."""
    if not _HOST:
        total, started, cpu = 0, time.perf_counter(), time.process_time()
        for i in range(10_000_000):
            total += i
        _HOST["host_loop_s"] = round(time.perf_counter() - started, 3)
        _HOST["host_loop_cpu_s"] = round(time.process_time() - cpu, 3)
    return {**_HOST, "load_avg": [round(x, 2) for x in os.getloadavg()]}


@dataclass
class _Proc:
    ppid: int
    own: float  # utime + stime
    kids: float  # cutime + cstime (its reaped children)
    comm: str


def _read_stat(pid: int) -> _Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    comm = raw[raw.index("(") + 1: raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2:].split()
    # fields[0] is state (3rd field of stat); utime is the 14th field → fields[11].
    ut, st, cut, cst = (int(x) for x in fields[11:15])
    return _Proc(int(fields[1]), (ut + st) / TICK, (cut + cst) / TICK, comm)


def _all_procs() -> dict[int, _Proc]:
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (p := _read_stat(int(name))) is not None:
            procs[int(name)] = p
    return procs


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _descendants(procs: dict[int, _Proc], root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, p in procs.items():
        children.setdefault(p.ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid)
    return out


def _server_cpu(procs: dict[int, _Proc], postmaster: int) -> float:
    """One PostgreSQL server's CPU: the postmaster's, its live children's, and (through the
    postmaster's cutime) its ended backends'."""
    if postmaster not in procs:
        return 0.0
    p = procs[postmaster]
    return p.own + p.kids + sum(c.own for c in procs.values() if c.ppid == postmaster)


def _socket_ports(pids: list[int]) -> set[int]:
    """Local TCP ports of the sockets these processes hold."""
    inodes: set[int] = set()
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(int(link[8:-1]))
    ports: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if int(cols[9]) in inodes:
                ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


_CLIENT_PORT = re.compile(r"\(([0-9]+)\)")


def _rusage() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _become_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


@dataclass
class CpuMeter:
    """``with CpuMeter(database_url=url) as cpu: …`` then ``cpu.figures(per=n, unit="ti")``."""

    database_url: str | None = None
    roles: tuple[tuple[str, str], ...] = ()
    interval: float = 0.25
    host: bool = True  # time the host's loop first (once per process); False in a sub-process
    cpu_s: float = 0.0
    by_role: dict[str, float] = field(default_factory=dict)
    _seen: dict[int, tuple[str, float]] = field(default_factory=dict)  # pid → role, own CPU
    _base: dict[int, tuple[float, float]] = field(default_factory=dict)
    _roles_of: dict[int, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _servers: set[int] = field(default_factory=set)  # postmasters serving this tree
    _backends: dict[int, float] = field(default_factory=dict)  # backend pid → own CPU
    _client_port: dict[int, int | None] = field(default_factory=dict)
    _sampler_cpu: float = 0.0

    def __enter__(self) -> CpuMeter:
        if self.host:
            host_speed()
        _become_subreaper()
        self._pg = bool(self.database_url and self.database_url.startswith("postgres"))
        procs = _all_procs()
        self._base = {pid: (procs[pid].own, procs[pid].kids)
                      for pid in _descendants(procs, os.getpid())}
        self._start = procs
        self._self0, self._reaped0 = _rusage()
        self._wall0 = time.perf_counter()
        self._thread = threading.Thread(target=self._sample_loop, name="cpu-meter", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self.wall_s = time.perf_counter() - self._wall0
        procs = self._sample()
        own, reaped = _rusage()
        own_d = own - self._self0 - self._sampler_cpu
        live = 0.0
        for pid in _descendants(procs, os.getpid()):
            p, (b_own, b_kids) = procs[pid], self._base.get(pid, (0.0, 0.0))
            live += p.own + p.kids - b_own - b_kids
        # A process alive at the start and reaped since: its whole life is in RUSAGE_CHILDREN.
        gone = sum(o + k for pid, (o, k) in self._base.items() if pid not in procs)
        tree = own_d + (reaped - self._reaped0 - gone) + live
        roles: dict[str, float] = {"bench": own_d}
        for pid, (role, cpu) in self._seen.items():
            roles[role] = roles.get(role, 0.0) + cpu - self._base.get(pid, (0.0, 0.0))[0]
        roles["unsampled"] = max(0.0, tree - sum(roles.values()))
        if self._pg:
            # The backends of this tree's connections (counted); the servers that served them,
            # whole (not one inside the tree: counted above), beside (not added).
            mine = set(_descendants(procs, os.getpid()))
            if not self._servers:  # no connection seen: every server on this host
                self._servers = {pid for pid, p in procs.items() if p.comm.startswith(
                    "postgres") and not procs.get(p.ppid, p).comm.startswith("postgres")}
            roles["postgresql"] = sum(
                cpu - (self._start[pid].own if pid in self._start else 0.0)
                for pid, cpu in self._backends.items())
            roles["postgresql_server"] = sum(_server_cpu(procs, s) - _server_cpu(self._start, s)
                                             for s in self._servers if s not in mine)
        self.cpu_s = tree + roles.get("postgresql", 0.0)
        self.by_role = {k: round(v, 3) for k, v in roles.items()}

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.interval):
            started = time.thread_time()
            self._sample()
            self._sampler_cpu += time.thread_time() - started

    def _sample(self) -> dict[int, _Proc]:
        procs = _all_procs()
        tree = _descendants(procs, os.getpid())
        for pid in tree:
            role = COMM_ROLES.get(procs[pid].comm) or self._roles_of.get(pid)
            if role is None:
                role = self._role(pid, procs[pid].ppid)
                self._roles_of[pid] = role
            self._seen[pid] = (role, procs[pid].own)
        if self._pg:
            self._sample_backends(procs, [os.getpid(), *tree])
        return procs

    def _sample_backends(self, procs: dict[int, _Proc], tree: list[int]) -> None:
        """PostgreSQL backends serving a connection of this tree: a backend's title names its
        client's address and port (``postgres: … 127.0.0.1(41332) idle``)."""
        ports = _socket_ports(tree)
        for pid, p in procs.items():
            if not p.comm.startswith("postgres"):
                continue
            if pid not in self._client_port:
                found = _CLIENT_PORT.search(_cmdline(pid))
                self._client_port[pid] = int(found.group(1)) if found else None
            if self._client_port[pid] in ports:
                self._backends[pid] = p.own
                self._servers.add(p.ppid)

    def _role(self, pid: int, ppid: int) -> str:
        cmd = _cmdline(pid)
        for fragment, role in (*self.roles, *DEFAULT_ROLES):
            if fragment in cmd:
                return role
        return self._roles_of.get(ppid, "children")

    def figures(self, per: int | None = None, unit: str = "ti") -> dict[str, Any]:
        """The keys every benchmark line carries: ``cpu_s``, ``cpu_ms_per_<unit>``, the split per
        role, ``host_loop_s`` and ``load_avg`` (not in a sub-process: ``host=False``)."""
        out: dict[str, Any] = {"cpu_s": round(self.cpu_s, 3)}
        if per:
            out[f"cpu_ms_per_{unit}"] = round(self.cpu_s * 1000 / per, 3)
        out["cpu_s_by_role"] = self.by_role
        if self.host:
            out.update(host_speed())
        return out


def metered(database_url: str | None, per: int | None, unit: str, fn: Any, *args: Any,
            roles: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """``fn(*args)``'s dict of figures, with the CPU of the call (``CpuMeter.figures``)."""
    with CpuMeter(database_url, roles) as cpu:
        result = fn(*args)
    cpu.host = False  # the host's figures once per line (``totals``)
    return {**result, **cpu.figures(per, unit)}


def totals(out: dict[str, Any], per: int | None, unit: str) -> dict[str, Any]:
    """The line's ``cpu_s`` (the sum of its metered phases' ``cpu_s``), ``cpu_ms_per_<unit>`` over
    ``per`` units, ``host_loop_s`` and ``load_avg``."""
    cpu = sum(v["cpu_s"] for v in out.values() if isinstance(v, dict) and "cpu_s" in v)
    figures: dict[str, Any] = {"cpu_s": round(cpu, 3)}
    if per:
        figures[f"cpu_ms_per_{unit}"] = round(cpu * 1000 / per, 3)
    figures.update(host_speed())
    return figures


def flat(out: dict[str, Any], name: str, figures: dict[str, Any]) -> None:
    """A phase's figures into ``out`` as they were (flat); its CPU under ``cpu_<name>``."""
    out[f"cpu_{name}"] = {k: figures.pop(k) for k in list(figures) if k.startswith("cpu_")}
    out.update(figures)
