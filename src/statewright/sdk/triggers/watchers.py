"""Triggers for ``AssetWatcher``: each event they yield becomes an event of the watched asset.

The triggerer runs a watcher's trigger continuously: when ``run()`` ends (after an event) the
trigger is built again from its arguments and run again (re-armed); when it raises, the error is
recorded and it is re-armed after a back-off. A trigger may also keep yielding events without
ending (the Redis triggers do: they hold their connection).

* ``FileDeleteTrigger(filepath)`` — Airflow's: fires when the file exists, after deleting it.
* ``DirectoryFileDeleteTrigger(directory=..., filename=...)`` — Airflow 3.3's: fires once when
  ``filename`` appears in ``directory``, after deleting it (payload ``{"filepath": ...}``).
  Airflow's triggerer shares one directory scan among such triggers on the same directory and
  interval; here each trigger scans for itself (the same events, more directory listings).
* ``DirectoryFileTrigger(directory, pattern="*")`` — fires for a file appearing in a directory,
  after moving it into ``<directory>/.processed/`` (so it fires once per file).
* ``RedisStreamTrigger(stream, url=...)`` — one event per message of a Redis stream, read in a
  consumer group (a message is acknowledged once the triggerer has taken its event).
* ``RedisListTrigger(key, url=...)`` — one event per item popped from a Redis list.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["DirectoryFileDeleteTrigger", "DirectoryFileTrigger", "FileDeleteTrigger",
           "RedisListTrigger", "RedisStreamTrigger", "raise_if_cancelled"]

PROCESSED = ".processed"


def _positive(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


class FileDeleteTrigger(BaseTrigger):
    """Fire when ``filepath`` exists; the file is deleted first (Airflow's trigger)."""

    def __init__(self, filepath: str, poke_interval: float = 5.0) -> None:
        super().__init__()
        if not isinstance(filepath, str) or not filepath:
            raise ValueError("FileDeleteTrigger: filepath must be a non-empty path")
        self.filepath = filepath
        self.poke_interval = _positive(poke_interval, "FileDeleteTrigger: poke_interval")

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {"filepath": self.filepath,
                                    "poke_interval": self.poke_interval}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            if await asyncio.to_thread(os.path.isfile, self.filepath):
                await asyncio.to_thread(os.remove, self.filepath)
                yield TriggerEvent({"path": self.filepath})
                return
            await asyncio.sleep(self.poke_interval)


def _delete_if_there(path: str) -> bool:
    """Delete ``path`` if it is a file there; False when it is not (or another took it)."""
    if not os.path.isfile(path):
        return False
    try:
        os.remove(path)
    except FileNotFoundError:
        return False  # a sibling trigger or another process took it first
    return True


class DirectoryFileDeleteTrigger(BaseTrigger):
    """Fire once when ``filename`` appears in ``directory``; the file is deleted first
    (Airflow 3.3's ``airflow.providers.standard.triggers.file.DirectoryFileDeleteTrigger``)."""

    def __init__(self, *, directory: str, filename: str, poke_interval: float = 5.0) -> None:
        super().__init__()
        if not isinstance(directory, str) or not directory:
            raise ValueError("DirectoryFileDeleteTrigger: directory must be a non-empty path")
        if not isinstance(filename, str) or not filename or os.sep in filename:
            raise ValueError("DirectoryFileDeleteTrigger: filename must be a file name, "
                             f"without a directory, got {filename!r}")
        self.directory = directory
        self.filename = filename
        self.poke_interval = _positive(poke_interval, "DirectoryFileDeleteTrigger: poke_interval")

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {"directory": self.directory, "filename": self.filename,
                                    "poke_interval": self.poke_interval}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        path = os.path.join(self.directory, self.filename)
        while True:
            if await asyncio.to_thread(_delete_if_there, path):
                yield TriggerEvent({"filepath": path})
                return
            await asyncio.sleep(self.poke_interval)


def _take_first(directory: str, pattern: str) -> tuple[str, str] | None:
    """Move the oldest file matching ``pattern`` into ``.processed``: (original, new path)."""
    try:
        with os.scandir(directory) as listing:  # closed here, not whenever it is collected
            entries = [e for e in listing if e.is_file() and fnmatch.fnmatch(e.name, pattern)]
    except FileNotFoundError:
        return None
    if not entries:
        return None
    entry = min(entries, key=lambda e: (e.stat().st_mtime, e.name))
    done = Path(directory) / PROCESSED
    done.mkdir(exist_ok=True)
    target = done / entry.name
    os.replace(entry.path, target)
    return entry.path, str(target)


class DirectoryFileTrigger(BaseTrigger):
    """Fire for a file matching ``pattern`` that appears in ``directory``.

    The file is moved into ``<directory>/.processed/`` before the event, so each file fires
    once; the payload says where it was and where it is now.
    """

    def __init__(self, directory: str, pattern: str = "*", poke_interval: float = 1.0) -> None:
        super().__init__()
        if not isinstance(directory, str) or not directory:
            raise ValueError("DirectoryFileTrigger: directory must be a non-empty path")
        if not isinstance(pattern, str) or not pattern:
            raise ValueError("DirectoryFileTrigger: pattern must be a non-empty glob pattern")
        self.directory = directory
        self.pattern = pattern
        self.poke_interval = _positive(poke_interval, "DirectoryFileTrigger: poke_interval")

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {"directory": self.directory, "pattern": self.pattern,
                                    "poke_interval": self.poke_interval}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            taken = await asyncio.to_thread(_take_first, self.directory, self.pattern)
            if taken is not None:
                yield TriggerEvent({"path": taken[0], "processed_path": taken[1]})
                return
            await asyncio.sleep(self.poke_interval)


def raise_if_cancelled() -> None:
    """Re-raise a cancellation a client swallowed (the task is still marked as cancelling)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _close(client: Any) -> None:
    """Close a Redis client without waiting long on a connection cut mid-command (a cancelled
    blocking read): its sockets are dropped after a second."""
    try:
        await asyncio.wait_for(client.aclose(), timeout=1.0)
    except (TimeoutError, OSError):
        await client.connection_pool.disconnect(inuse_connections=True)


def _text(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RedisStreamTrigger(BaseTrigger):
    """One event per message of the Redis stream ``stream`` (payload: stream, id, fields).

    Messages are read in the consumer group ``group`` (created at the stream's end when
    missing): messages delivered but not acknowledged before a restart are read again first.
    """

    def __init__(self, stream: str, url: str = "redis://127.0.0.1:6379/0",
                 group: str = "statewright", consumer: str = "triggerer", count: int = 500,
                 block_seconds: float = 1.0) -> None:
        super().__init__()
        if not isinstance(stream, str) or not stream:
            raise ValueError("RedisStreamTrigger: stream must be a non-empty key")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"RedisStreamTrigger: count must be a positive integer, got {count!r}")
        self.stream, self.url, self.group, self.consumer = stream, url, group, consumer
        self.count = count
        self.block_seconds = _positive(block_seconds, "RedisStreamTrigger: block_seconds")

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {"stream": self.stream, "url": self.url, "group": self.group,
                                    "consumer": self.consumer, "count": self.count,
                                    "block_seconds": self.block_seconds}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        import redis.asyncio as aioredis
        from redis.exceptions import ResponseError

        client = aioredis.from_url(self.url)
        try:
            try:
                await client.xgroup_create(self.stream, self.group, id="$", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
            position = "0"  # first what was delivered and not acknowledged, then new messages
            while True:
                reply = await client.xreadgroup(
                    self.group, self.consumer, {self.stream: position}, count=self.count,
                    block=None if position == "0" else int(self.block_seconds * 1000))
                raise_if_cancelled()
                messages = reply[0][1] if reply else []
                if position == "0" and not messages:
                    position = ">"
                    continue
                for message_id, fields in messages:
                    yield TriggerEvent({
                        "stream": self.stream, "id": _text(message_id),
                        "fields": {_text(k): _text(v) for k, v in fields.items()}})
                if messages:
                    await client.xack(self.stream, self.group, *[m for m, _ in messages])
        finally:
            await _close(client)


class RedisListTrigger(BaseTrigger):
    """One event per item popped (BLPOP) from the Redis list ``key`` (payload: key, value)."""

    def __init__(self, key: str, url: str = "redis://127.0.0.1:6379/0",
                 block_seconds: float = 1.0) -> None:
        super().__init__()
        if not isinstance(key, str) or not key:
            raise ValueError("RedisListTrigger: key must be a non-empty key")
        self.key, self.url = key, url
        self.block_seconds = _positive(block_seconds, "RedisListTrigger: block_seconds")

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {"key": self.key, "url": self.url,
                                    "block_seconds": self.block_seconds}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        import redis.asyncio as aioredis

        client = aioredis.from_url(self.url)
        try:
            while True:
                item = await client.blpop([self.key], timeout=self.block_seconds)
                raise_if_cancelled()
                if item is not None:
                    yield TriggerEvent({"key": self.key, "value": _text(item[1])})
        finally:
            await _close(client)
