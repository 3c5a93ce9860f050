"""Persisted results (``persist_result=True``, ``result_storage``, ``result_serializer``).

A task run whose result is persisted gets a cache key (its ``cache_policy``; Prefect's
``DEFAULT`` — inputs, task source and flow run — when it has none), and its result is stored
under that key: as a JSON value in the database when no storage is given and the serializer
is JSON (or unset and the value is JSON), else in a file of ``result_storage`` (a local
directory; ``$STATEWRIGHT_HOME/results`` by default) written with the serializer ("pickle", the
default there, or "json"). The same key in the same flow run — a suspended run resumed and
running again — finds the result and the task is not run again (``Cached``).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewright.flows.cache_policies import DEFAULT, CachePolicy

MARK = "__statewright_result__"
SERIALIZERS = ("json", "pickle")


class ResultNotStored(Exception):
    """The result cannot be persisted with these options (the reason says why)."""


@dataclass(frozen=True)
class ResultOptions:
    persist: bool = False
    storage: Path | None = None
    serializer: str | None = None


def serializer_of(value: Any) -> str | None:
    """``"json"`` / ``"pickle"``, or a serializer object with that ``type`` (Prefect's)."""
    if value is None:
        return None
    name = value if isinstance(value, str) else getattr(value, "type", None)
    if name not in SERIALIZERS:
        raise ValueError(f"result_serializer must be 'json' or 'pickle'; got {value!r}.")
    return str(name)


def storage_of(value: Any) -> Path | None:
    """A local directory: a path, or an object with a ``basepath`` (Prefect's LocalFileSystem)."""
    if value is None:
        return None
    base = getattr(value, "basepath", value)
    if isinstance(base, str | os.PathLike):
        return Path(base).expanduser()
    raise ValueError(f"result_storage must be a local directory (a path, or LocalFileSystem("
                     f"basepath=...)); got {value!r}.")


def options_for(task: Any, flow: Any) -> ResultOptions:
    """The task's options, else its flow's (as Prefect's)."""
    persist = task.persist_result if task.persist_result is not None else flow.persist_result
    return ResultOptions(bool(persist), task.result_storage or flow.result_storage,
                         task.result_serializer or flow.result_serializer)


def policy_for(task: Any, options: ResultOptions) -> CachePolicy | None:
    if task.cache_policy is not None:
        return task.cache_policy  # type: ignore[no-any-return]
    return DEFAULT if options.persist else None


def _file_name(key: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}", key):
        return key
    return hashlib.sha256(key.encode()).hexdigest()


def store(options: ResultOptions, key: str, value: Any) -> Any:
    """What the cache row holds for ``value``: the JSON value, or a reference to its file."""
    if options.storage is None and options.serializer in (None, "json"):
        try:
            return json.loads(json.dumps(value))
        except (TypeError, ValueError) as exc:
            if options.serializer == "json":
                raise ResultNotStored(f"the result is not a JSON value ({exc})") from None
    serializer = options.serializer or "pickle"
    folder = options.storage or _default_storage()
    try:
        data = (json.dumps(value).encode() if serializer == "json"
                else pickle.dumps(value))
    except Exception as exc:
        raise ResultNotStored(f"the result cannot be serialized with {serializer} "
                              f"({type(exc).__name__}: {exc})") from None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _file_name(key)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".result-")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)  # a reader never sees half a file
    return {MARK: {"path": str(path.resolve()), "serializer": serializer}}


def load(stored: Any) -> Any:
    """The result a cache row holds (read from its file when it is a reference)."""
    ref = stored.get(MARK) if isinstance(stored, dict) and len(stored) == 1 else None
    if ref is None:
        return stored
    data = Path(ref["path"]).read_bytes()
    return json.loads(data) if ref["serializer"] == "json" else pickle.loads(data)


def _default_storage() -> Path:
    from statewright.config import load_settings

    return Path(load_settings().home) / "results"
