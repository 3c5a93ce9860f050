"""``FileSensor``: wait for a file (a path or a glob pattern) to exist."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.file import FileTrigger, find_first_file

__all__ = ["FileSensor"]


class FileSensor(BaseSensor):
    """Succeed when a file matches ``filepath`` (a directory counts when it holds a file)."""

    template_fields = ("filepath",)
    supports_deferral = True

    def __init__(self, *, filepath: str, recursive: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.filepath = filepath
        self.recursive = bool(recursive)

    def poke(self, context: Any) -> bool:
        found = find_first_file(self.filepath, self.recursive)
        return found is not None

    def execute_deferrable(self, context: Any) -> Any:
        if self.poke(context):
            return None
        self.defer(
            trigger=FileTrigger(self.filepath, recursive=self.recursive,
                                poke_interval=max(self.poke_interval, 0.01)),
            method_name="execute_complete", timeout=timedelta(seconds=self.timeout))
