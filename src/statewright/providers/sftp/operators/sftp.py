"""``SFTPOperator``: put files on, or get them from, a remote host (Airflow's sftp provider).

``operation`` is ``"put"`` (local → remote) or ``"get"`` (remote → local); ``local_filepath``
and ``remote_filepath`` are one path each or lists of the same length.
``create_intermediate_dirs`` creates the missing directories of the destination. The task
returns ``local_filepath``, as in Airflow.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.sftp.hooks.sftp import SFTPHook
from statewright.providers.ssh.hooks.ssh import SSHHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["SFTPOperation", "SFTPOperator"]


class SFTPOperation:
    PUT = "put"
    GET = "get"


class SFTPOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("local_filepath", "remote_filepath",
                                                "remote_host")

    def __init__(self, *, ssh_hook: SSHHook | None = None, sftp_hook: SFTPHook | None = None,
                 ssh_conn_id: str | None = None, remote_host: str | None = None,
                 local_filepath: str | list[str], remote_filepath: str | list[str],
                 operation: str = SFTPOperation.PUT, confirm: bool = True,
                 create_intermediate_dirs: bool = False, concurrency: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if operation.lower() not in (SFTPOperation.GET, SFTPOperation.PUT):
            raise StatewrightError(f"SFTPOperator {self.task_id!r}: unsupported operation "
                                   f"{operation!r}; expected {SFTPOperation.GET!r} or "
                                   f"{SFTPOperation.PUT!r}")
        self.ssh_hook = ssh_hook
        self.sftp_hook = sftp_hook
        self.ssh_conn_id = ssh_conn_id
        self.remote_host = remote_host
        self.local_filepath = local_filepath
        self.remote_filepath = remote_filepath
        self.operation = operation.lower()
        self.confirm = confirm
        self.create_intermediate_dirs = create_intermediate_dirs
        # (not self.concurrency: Airflow 2's name of max_active_tis_per_dag on a task)
        self._concurrency = concurrency

    def _hook(self) -> SFTPHook:
        if self.sftp_hook is None:
            if self.ssh_conn_id:
                self.sftp_hook = SFTPHook(ssh_conn_id=self.ssh_conn_id,
                                          remote_host=self.remote_host or "")
            elif self.ssh_hook is not None:
                self.sftp_hook = SFTPHook(ssh_hook=self.ssh_hook)
            else:
                raise StatewrightError(f"SFTPOperator {self.task_id!r}: give sftp_hook, "
                                       "ssh_hook or ssh_conn_id")
        if self.remote_host:
            self.sftp_hook.remote_host = self.remote_host
        return self.sftp_hook

    def _pairs(self) -> list[tuple[str, str]]:
        local = [self.local_filepath] if isinstance(self.local_filepath, str) \
            else list(self.local_filepath)
        remote = [self.remote_filepath] if isinstance(self.remote_filepath, str) \
            else list(self.remote_filepath)
        if len(local) != len(remote):
            raise ValueError(f"{len(local)} paths in local_filepath != {len(remote)} paths in "
                             "remote_filepath")
        return list(zip(local, remote, strict=True))

    def execute(self, context: Any) -> str | list[str] | None:
        pairs = self._pairs()
        hook = self._hook()
        try:
            for local, remote in pairs:
                if self.operation == SFTPOperation.GET:
                    if self.create_intermediate_dirs:
                        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
                    self.log.info("Starting to transfer from %s to %s", remote, local)
                    hook.retrieve_file(remote, local)
                else:
                    if self.create_intermediate_dirs:
                        hook.create_directory(os.path.dirname(remote))
                    self.log.info("Starting to transfer file from %s to %s", local, remote)
                    hook.store_file(remote, local, confirm=self.confirm)
        except Exception as exc:
            raise StatewrightError(f"Error while processing {self.operation.upper()} "
                                   f"operation: {exc}") from exc
        finally:
            hook.close_conn()
        return self.local_filepath
