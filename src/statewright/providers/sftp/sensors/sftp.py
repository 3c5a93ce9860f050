"""``SFTPSensor``: wait for a file on a remote host (Airflow's sftp provider).

With ``file_pattern``, ``path`` is a directory and the sensor waits for a file in it matching
the shell pattern; without, it waits for ``path`` itself. ``newer_than`` (a datetime or its ISO
text; templated) also asks the file to be modified after it. With ``python_callable`` the
sensor calls it once files are found (with ``op_args``/``op_kwargs``) and returns
``{"files_found": [...], "decorator_return_value": <its result>}`` as its XCom.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from statewright.providers.sftp.hooks.sftp import SFTPHook
from statewright.sdk.sensors.base import BaseSensor, PokeReturnValue

__all__ = ["SFTPSensor"]


class SFTPSensor(BaseSensor):
    template_fields: ClassVar[Sequence[str]] = ("path", "newer_than")

    def __init__(self, *, path: str, file_pattern: str = "",
                 newer_than: datetime.datetime | str | None = None,
                 sftp_conn_id: str = "sftp_default",
                 python_callable: Callable[..., Any] | None = None,
                 op_args: list[Any] | None = None, op_kwargs: dict[str, Any] | None = None,
                 deferrable: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.file_pattern = file_pattern
        self.newer_than = newer_than
        self.sftp_conn_id = sftp_conn_id
        self.python_callable = python_callable
        self.op_args = list(op_args or [])
        self.op_kwargs = dict(op_kwargs or {})
        self.hook: SFTPHook | None = None

    def poke(self, context: Any) -> bool | PokeReturnValue:
        self.hook = SFTPHook(ssh_conn_id=self.sftp_conn_id)
        try:
            found = self._files(self.hook)
        finally:
            self.hook.close_conn()
        if not found:
            return False
        if self.python_callable is None:
            return True
        value = self.python_callable(*self.op_args, **self.op_kwargs)
        return PokeReturnValue(is_done=True, xcom_value={
            "files_found": found, "decorator_return_value": value})

    def _files(self, hook: SFTPHook) -> list[str]:
        if self.file_pattern:
            self.log.info("Poking for files matching %s in %s", self.file_pattern, self.path)
            names = hook.get_files_by_pattern(self.path, self.file_pattern)
            candidates = [f"{self.path.rstrip('/')}/{name}" for name in names]
        else:
            self.log.info("Poking for %s", self.path)
            candidates = [self.path] if hook.path_exists(self.path) else []
        if self.newer_than is None:
            return candidates
        since = _aware(self.newer_than)
        return [p for p in candidates if _aware(hook.get_mod_time(p)) > since]


def _aware(value: datetime.datetime | str) -> datetime.datetime:
    if isinstance(value, str):
        if len(value) == 14 and value.isdigit():  # SFTPHook.get_mod_time's form
            value = datetime.datetime.strptime(value, "%Y%m%d%H%M%S")
        else:
            value = datetime.datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
