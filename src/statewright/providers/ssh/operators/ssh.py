"""``SSHOperator``: run a command on a remote host over SSH (Airflow's ssh provider).

The command is templated (a ``.sh`` file name is read as a template). A non-zero exit status
fails the task (``skip_on_exit_code`` statuses skip it); the exit status is pushed as the XCom
``ssh_exit``. As in Airflow, the task's return value (its XCom) is the command's standard output
encoded in base64, as text.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Container, Iterable, Sequence
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.ssh.hooks.ssh import NOTSET, SSHHook
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.exceptions import SkipTask

__all__ = ["SSHOperator"]


class SSHOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("command", "environment", "remote_host")
    template_ext: ClassVar[Sequence[str]] = (".sh", ".bash", ".csh", ".zsh", ".dash", ".ksh")
    template_fields_renderers: ClassVar[dict[str, str]] = {"command": "bash",
                                                           "environment": "python"}

    def __init__(self, *, ssh_hook: SSHHook | None = None, ssh_conn_id: str | None = None,
                 remote_host: str | None = None, command: str | None = None,
                 conn_timeout: float | None = None, cmd_timeout: Any = NOTSET,
                 environment: dict[str, str] | None = None, get_pty: bool = False,
                 banner_timeout: float = 30.0,
                 skip_on_exit_code: int | Iterable[int] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ssh_hook = ssh_hook
        self.ssh_conn_id = ssh_conn_id
        self.remote_host = remote_host
        self.command = command
        self.conn_timeout = conn_timeout
        self.cmd_timeout = cmd_timeout
        self.environment = environment
        self.get_pty = get_pty
        self.banner_timeout = banner_timeout
        self.skip_on_exit_code: Container[int] = (
            (skip_on_exit_code,) if isinstance(skip_on_exit_code, int)
            else tuple(skip_on_exit_code or ()))

    @property
    def hook(self) -> SSHHook:
        if self.ssh_hook is None:
            if not self.ssh_conn_id:
                raise StatewrightError(f"SSHOperator {self.task_id!r}: give ssh_hook or "
                                       "ssh_conn_id")
            self.ssh_hook = SSHHook(ssh_conn_id=self.ssh_conn_id, remote_host=self.remote_host
                                    or "", conn_timeout=self.conn_timeout,
                                    cmd_timeout=self.cmd_timeout,
                                    banner_timeout=self.banner_timeout)
        elif self.remote_host:
            self.ssh_hook.remote_host = self.remote_host
        return self.ssh_hook

    def get_ssh_client(self) -> Any:
        self.log_info(f"Creating ssh_client to {self.hook.remote_host}")
        return self.hook.get_conn()

    def log_info(self, message: str) -> None:
        self.hook.log.info(message)

    def run_ssh_client_command(self, ssh_client: Any, command: str,
                               context: Any = None) -> bytes:
        status, stdout, stderr = self.hook.exec_ssh_client_command(
            ssh_client, command, get_pty=self.get_pty, environment=self.environment,
            timeout=self.cmd_timeout)
        self.raise_for_status(status, stderr, context=context)
        return stdout

    def raise_for_status(self, exit_status: int, stderr: bytes, context: Any = None) -> None:
        ti = context.get("ti") if context is not None else None
        if ti is not None and self.do_xcom_push:
            ti.xcom_push(key="ssh_exit", value=exit_status)
        if exit_status in self.skip_on_exit_code:
            raise SkipTask(f"SSH command returned exit code {exit_status}. Skipping.")
        if exit_status != 0:
            raise StatewrightError(f"SSH operator error: exit status = {exit_status}: "
                                   f"{stderr.decode(errors='replace').strip()}")

    def execute(self, context: Any) -> Any:
        if not self.command:
            raise StatewrightError("SSH operator error: SSH command not specified. Aborting.")
        with self.get_ssh_client() as client:
            result = self.run_ssh_client_command(client, self.command, context=context)
        return b64encode(result).decode("utf-8")
