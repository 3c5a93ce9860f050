"""``FileTrigger``: fire when a file matching a path or glob pattern exists."""

from __future__ import annotations

import asyncio
import glob
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["FileTrigger"]

log = logging.getLogger(__name__)


class FileTrigger(BaseTrigger):
    """Fire when a file matches ``filepath`` (a path or a glob pattern; ``~`` is expanded).

    A matching directory counts when it holds a file. With ``recursive=True``, ``**`` in the
    pattern matches any number of directories. The filesystem is checked every
    ``poke_interval`` seconds, in a thread so the event loop never blocks on a slow disk.
    The payload is ``{"path": <the first matching file, in sorted order>}``.
    """

    def __init__(self, filepath: str, recursive: bool = False, poke_interval: float = 5.0) -> None:
        super().__init__()
        if not isinstance(filepath, str) or not filepath:
            raise ValueError("FileTrigger: filepath must be a non-empty path or glob pattern")
        if not poke_interval > 0:
            raise ValueError(f"FileTrigger: poke_interval must be > 0 seconds, got {poke_interval}")
        self.filepath = filepath
        self.recursive = bool(recursive)
        self.poke_interval = float(poke_interval)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            classpath_of(self),
            {
                "filepath": self.filepath,
                "recursive": self.recursive,
                "poke_interval": self.poke_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            found = await asyncio.to_thread(find_first_file, self.filepath, self.recursive)
            if found is not None:
                log.debug("trigger %s: found %s", self.trigger_id, found)
                yield TriggerEvent({"path": found})
                return
            await asyncio.sleep(self.poke_interval)


def find_first_file(pattern: str, recursive: bool = False) -> str | None:
    """The first regular file matching ``pattern`` (or inside a matching directory), or None."""
    for match in sorted(glob.glob(os.path.expanduser(pattern), recursive=recursive)):
        if os.path.isfile(match):
            return match
        if os.path.isdir(match):
            for root, dirs, files in os.walk(match):
                dirs.sort()
                for name in sorted(files):
                    candidate = os.path.join(root, name)
                    if os.path.isfile(candidate):
                        return candidate
    return None
