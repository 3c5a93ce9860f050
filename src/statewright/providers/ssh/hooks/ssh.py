"""``SSHHook``: a paramiko ``SSHClient`` made from an ``ssh`` connection (Airflow's ssh provider).

The connection gives ``host``, ``port`` (22), ``login`` (the user; the local user when none),
``password`` and, in its extra, ``key_file``, ``private_key`` (the key's text) with
``private_key_passphrase``, ``conn_timeout``/``timeout``, ``cmd_timeout`` (10 s; ``null`` for
none), ``compress``, ``no_host_key_check`` (true), ``allow_host_key_change``, ``host_key``,
``look_for_keys``, ``banner_timeout``, ``disabled_algorithms`` and ``ciphers``. Arguments given
to the hook win over the connection.
"""

from __future__ import annotations

import getpass
import io
import select
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.sdk.basehook import BaseHook

__all__ = ["CMD_TIMEOUT", "NOTSET", "SSHHook"]

CMD_TIMEOUT = 10.0
"""Seconds a command may run before it fails (Airflow's default)."""


class _NotSet:
    def __repr__(self) -> str:
        return "NOTSET"


NOTSET: Any = _NotSet()
"""An argument left out (``None`` means "no timeout")."""

_TRUE = ("true", "1", "yes", "on")


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def _seconds(value: Any) -> float | None:
    return None if value in (None, "", "null", "None") else float(value)


class SSHHook(BaseHook):
    conn_name_attr: ClassVar[str] = "ssh_conn_id"
    default_conn_name: ClassVar[str] = "ssh_default"
    conn_type: ClassVar[str] = "ssh"
    hook_name: ClassVar[str] = "SSH"

    def __init__(self, ssh_conn_id: str | None = None, remote_host: str = "",
                 username: str | None = None, password: str | None = None,
                 key_file: str | None = None, port: int | None = None,
                 conn_timeout: float | None = None, cmd_timeout: Any = NOTSET,
                 keepalive_interval: int = 30, banner_timeout: float = 30.0,
                 disabled_algorithms: dict[str, Any] | None = None,
                 ciphers: list[str] | None = None, auth_timeout: float | None = None,
                 host_proxy_cmd: str | None = None) -> None:
        super().__init__()
        self.ssh_conn_id = ssh_conn_id
        self.remote_host = remote_host
        self.username = username
        self.password = password
        self.key_file = key_file
        self.pkey: Any = None
        self.port = port
        self.conn_timeout = conn_timeout
        self.cmd_timeout = cmd_timeout
        self.keepalive_interval = keepalive_interval
        self.banner_timeout = banner_timeout
        self.disabled_algorithms = disabled_algorithms
        self.ciphers = ciphers
        self.auth_timeout = auth_timeout
        self.host_proxy_cmd = host_proxy_cmd
        self.compress = True
        self.no_host_key_check = True
        self.allow_host_key_change = False
        self.host_key: Any = None
        self.look_for_keys = True
        self.client: Any = None
        if ssh_conn_id is not None:
            self._read_connection(ssh_conn_id)
        if self.cmd_timeout is NOTSET:
            self.cmd_timeout = CMD_TIMEOUT
        if not self.remote_host:
            raise ValueError("SSHHook: no remote host: give remote_host= or a connection with "
                             "a host")
        if self.username is None:
            self.username = getpass.getuser()
            self.log.warning("SSHHook: no username given, using the local user %s",
                             self.username)
        if self.port is None:
            self.port = 22

    def _read_connection(self, conn_id: str) -> None:
        conn = self.get_connection(conn_id)
        self.remote_host = self.remote_host or conn.host or ""
        self.username = self.username if self.username is not None else conn.login
        self.password = self.password if self.password is not None else conn.password
        self.port = self.port if self.port is not None else conn.port
        extra = conn.extra_dejson
        self.key_file = self.key_file or extra.get("key_file")
        if extra.get("private_key"):
            self.pkey = _private_key(str(extra["private_key"]),
                                     extra.get("private_key_passphrase"))
        if self.conn_timeout is None:
            timeout = extra.get("conn_timeout", extra.get("timeout"))
            self.conn_timeout = _seconds(timeout) if timeout is not None else None
        if self.cmd_timeout is NOTSET and "cmd_timeout" in extra:
            self.cmd_timeout = _seconds(extra["cmd_timeout"])
        self.compress = _flag(extra.get("compress"), True)
        self.no_host_key_check = _flag(extra.get("no_host_key_check"), True)
        self.allow_host_key_change = _flag(extra.get("allow_host_key_change"), False)
        self.look_for_keys = _flag(extra.get("look_for_keys"), True)
        self.banner_timeout = float(extra.get("banner_timeout", self.banner_timeout))
        self.disabled_algorithms = self.disabled_algorithms or extra.get("disabled_algorithms")
        self.ciphers = self.ciphers or extra.get("ciphers")
        if extra.get("host_key"):
            self.host_key = _public_key(str(extra["host_key"]))
            self.no_host_key_check = False

    # -- the client ---------------------------------------------------------------------------

    def get_conn(self) -> Any:
        """A connected ``paramiko.SSHClient`` (the caller closes it, or uses ``with``)."""
        import paramiko

        client = paramiko.SSHClient()
        if self.host_key is not None:
            client.get_host_keys().add(self._known_host_name(), self.host_key.get_name(),
                                       self.host_key)
        elif self.no_host_key_check:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        else:
            client.load_system_host_keys()
            if self.allow_host_key_change:
                client.set_missing_host_key_policy(paramiko.WarningPolicy())
        kwargs: dict[str, Any] = {
            "hostname": self.remote_host, "port": self.port, "username": self.username,
            "timeout": self.conn_timeout, "compress": self.compress,
            "look_for_keys": self.look_for_keys, "banner_timeout": self.banner_timeout,
            "auth_timeout": self.auth_timeout, "allow_agent": False,
        }
        if self.disabled_algorithms:
            kwargs["disabled_algorithms"] = self.disabled_algorithms
        if self.password:
            kwargs["password"] = self.password
        if self.pkey is not None:
            kwargs["pkey"] = self.pkey
        if self.key_file:
            kwargs["key_filename"] = self.key_file
        if self.host_proxy_cmd:
            kwargs["sock"] = paramiko.ProxyCommand(self.host_proxy_cmd)
        client.connect(**kwargs)
        transport = client.get_transport()
        if transport is not None and self.keepalive_interval:
            transport.set_keepalive(self.keepalive_interval)
        if self.ciphers and transport is not None:
            transport.get_security_options().ciphers = self.ciphers
        self.client = client
        return client

    def _known_host_name(self) -> str:
        return self.remote_host if self.port == 22 else f"[{self.remote_host}]:{self.port}"

    def __enter__(self) -> SSHHook:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def test_connection(self) -> tuple[bool, str]:
        try:
            with self.get_conn() as client:
                client.exec_command("pwd")
            return True, "Connection successfully tested"
        except Exception as exc:
            return False, str(exc)

    # -- commands -----------------------------------------------------------------------------

    def exec_ssh_client_command(self, ssh_client: Any, command: str, get_pty: bool,
                                environment: Mapping[str, str] | None,
                                timeout: Any = NOTSET) -> tuple[int, bytes, bytes]:
        """Run ``command``; returns ``(exit status, stdout, stderr)``. Each output line is
        logged as it comes. Fails when the command runs longer than ``timeout`` seconds (the
        hook's ``cmd_timeout`` when left out; ``None``: no limit)."""
        limit = self.cmd_timeout if timeout is NOTSET else timeout
        self.log.info("Running command: %s", command)
        stdin, stdout, stderr = ssh_client.exec_command(
            command, get_pty=get_pty, timeout=limit,
            environment=dict(environment) if environment else None)
        channel = stdout.channel
        stdin.close()
        channel.shutdown_write()
        out, err = _Lines(self.log.info), _Lines(self.log.warning)
        started = time.monotonic()
        while True:
            got = False
            while channel.recv_ready():
                out.add(channel.recv(65536))
                got = True
            while channel.recv_stderr_ready():
                err.add(channel.recv_stderr(65536))
                got = True
            if not got and channel.exit_status_ready() and (
                    channel.eof_received or channel.closed):
                break
            if limit is not None and time.monotonic() - started > float(limit):
                channel.close()
                raise StatewrightError(f"SSH command timed out after {limit} s: {command}")
            if not got:
                select.select([channel], [], [], 0.1)
        exit_status = channel.recv_exit_status()
        stdout.close()
        stderr.close()
        return exit_status, out.finish(), err.finish()


class _Lines:
    """Collects a stream's bytes and logs each complete line."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.data = bytearray()
        self._logged = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        end = self.data.rfind(b"\n")
        if end >= self._logged:
            for line in bytes(self.data[self._logged:end]).decode(errors="replace").split("\n"):
                self.emit(line)
            self._logged = end + 1

    def finish(self) -> bytes:
        if self._logged < len(self.data):
            self.emit(bytes(self.data[self._logged:]).decode(errors="replace"))
        return bytes(self.data)


def _private_key(text: str, passphrase: str | None) -> Any:
    import paramiko

    for key_class in (paramiko.Ed25519Key, paramiko.RSAKey, paramiko.ECDSAKey):
        try:
            return key_class.from_private_key(io.StringIO(text), password=passphrase)
        except (paramiko.SSHException, ValueError):
            continue
    raise ValueError("SSHHook: private_key in the connection's extra is not an RSA, ECDSA or "
                     "Ed25519 private key in OpenSSH or PEM form (or its passphrase is wrong)")


def _public_key(text: str) -> Any:
    import base64

    import paramiko

    parts = text.split()
    key_type, data = (parts[0], parts[1]) if len(parts) > 1 else ("ssh-rsa", parts[0])
    return paramiko.PKey.from_type_string(key_type, base64.b64decode(data))
