"""Private PostgreSQL and Redis instances for the chaos tests: started on free ports in a temporary
directory, restarted at will (a fault), always torn down. The machine's shared servers are never
touched: other tests and sessions use them.

We run as root; PostgreSQL refuses to, so its binaries run as the ``postgres`` OS user on a data
directory that user owns.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path(os.environ.get("STATEWRIGHT_CHAOS_PG_BIN", "/usr/lib/postgresql/15/bin"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f}s")


def _as_postgres(*args: str) -> list[str]:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return [*prefix, *args]


class PrivatePostgres:
    """``initdb`` + ``pg_ctl`` on a free port; ``restart()`` is a crash (``-m immediate``)."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError(f"PostgreSQL's server binaries are not in {PG_BIN}: install "
                               "postgresql-15 or set STATEWRIGHT_CHAOS_PG_BIN")
        self.root = Path(tempfile.mkdtemp(prefix="statewright-chaos-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.restarts = 0
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PrivatePostgres:
        if not self.data.exists():
            subprocess.run(_as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-A",
                                        "trust", "-U", "postgres", "--no-sync"),
                           check=True, capture_output=True)
        self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.root / "server.log"), "-o",
                     f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                     f"-c fsync=off -c max_connections=300")
        _wait_port(self.port, 30, "PostgreSQL")
        return self

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(_as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), *args),
                       check=True, capture_output=True)

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("stop", "-w", "-m", mode)

    def restart(self, down_seconds: float = 1.0) -> None:
        """A crash of the database: every connection is cut, then it comes back."""
        self.stop("immediate")
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(_as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "stop",
                                        "-m", "immediate"), capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


class PrivateRedis:
    """``redis-server`` without persistence on a free port; ``restart()`` is kill -9 and start."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--bind", "127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_port(self.port, 30, "Redis")
        return self

    def restart(self, down_seconds: float = 1.0) -> None:
        self.close()
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None


RABBITMQ_SERVER = Path(os.environ.get("STATEWRIGHT_CHAOS_RABBITMQ_SERVER",
                                      "/usr/lib/rabbitmq/bin/rabbitmq-server"))


class PrivateRabbitMQ:
    """A RabbitMQ node of its own (``rabbitmq-server`` with its own node name, ports, database and
    cookie in a temporary directory); ``restart()`` is kill -9 of the node and start again. Its
    database survives the restart, as a real node's disk does: durable queues and persistent
    messages come back, unacknowledged deliveries are handed out again."""

    def __init__(self) -> None:
        if not RABBITMQ_SERVER.exists():
            raise RuntimeError(f"rabbitmq-server is not at {RABBITMQ_SERVER}: install "
                               "rabbitmq-server or set STATEWRIGHT_CHAOS_RABBITMQ_SERVER")
        self.root = Path(tempfile.mkdtemp(prefix="statewright-chaos-rabbitmq-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        (self.root / "enabled_plugins").write_text("[].\n")
        (self.root / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
            "loopback_users = none\n")
        (self.root / "env.conf").write_text("")
        self.env = {**os.environ, "HOME": str(self.root),
                    "RABBITMQ_NODENAME": f"statewright-chaos-{self.port}@localhost",
                    "RABBITMQ_NODE_PORT": str(self.port),
                    "RABBITMQ_DIST_PORT": str(free_port()),
                    "RABBITMQ_MNESIA_BASE": str(self.root / "mnesia"),
                    "RABBITMQ_LOG_BASE": str(self.root / "log"),
                    "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.root / "enabled_plugins"),
                    "RABBITMQ_PLUGINS_EXPAND_DIR": str(self.root / "plugins-expand"),
                    "RABBITMQ_PID_FILE": str(self.root / "pid"),
                    "RABBITMQ_CONFIG_FILE": str(self.root / "rabbitmq"),
                    "RABBITMQ_ADVANCED_CONFIG_FILE": str(self.root / "advanced.config"),
                    "RABBITMQ_CONF_ENV_FILE": str(self.root / "env.conf")}

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}//"

    def start(self) -> PrivateRabbitMQ:
        with (self.root / "server.log").open("ab") as out:
            self.process = subprocess.Popen([str(RABBITMQ_SERVER)], env=self.env, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        _wait_port(self.port, 120, "RabbitMQ")
        return self

    def restart(self, down_seconds: float = 1.0) -> None:
        self._kill()
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1

    def _kill(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # the script and the node it started
        pid_file = self.root / "pid"
        with contextlib.suppress(OSError, ValueError):  # the node, if it left the group
            pid = int(pid_file.read_text().strip())
            if pid > 1:
                os.kill(pid, signal.SIGKILL)
        self.process.wait(10)
        self.process = None

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self.root, ignore_errors=True)
