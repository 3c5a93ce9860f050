"""An XCom backend that writes large values to files (Airflow's ``XComObjectStorageBackend``).

Settings (Airflow's ``[common.io]`` options):

- ``STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH``: where values go, an ``ObjectStoragePath``:
  ``file:///var/xcom`` (or a plain folder path) or ``s3://aws_default@bucket/xcom`` (the
  connection before the ``@``);
- ``STATEWRIGHT_XCOM_OBJECTSTORAGE_THRESHOLD``: a value whose JSON form has at least this many
  bytes goes to a file; smaller ones stay in the database (default ``-1``: every value stays);
- ``STATEWRIGHT_XCOM_OBJECTSTORAGE_COMPRESSION``: ``gzip``, ``bz2`` or ``lzma`` (default none).

A value written to a file is kept at ``<path>/<dag_id>/<run_id>/<task_id>/<uuid>.json[.gz]``;
the database row holds a reference ``{"__type": "objectstorage", "value": "s3://...",
"bytes": n}`` (with ``length``, the number of items of a list, tuple or dict, so that the
scheduler can map over a value it does not read). A reference is read back through the
configured path (and its connection); one that points outside it is refused.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from statewright.sdk import serde
from statewright.sdk.object_storage import ObjectStoragePath
from statewright.sdk.xcom_backend import BaseXCom

__all__ = ["XComObjectStorageBackend"]

PATH_SETTING = "STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH"
THRESHOLD_SETTING = "STATEWRIGHT_XCOM_OBJECTSTORAGE_THRESHOLD"
COMPRESSION_SETTING = "STATEWRIGHT_XCOM_OBJECTSTORAGE_COMPRESSION"
REFERENCE = "objectstorage"

_COMPRESSIONS: dict[str, tuple[str, Any]] = {
    "gzip": (".gz", gzip), "bz2": (".bz2", bz2), "lzma": (".xz", lzma), "xz": (".xz", lzma)}


def _base_path() -> ObjectStoragePath:
    raw = os.environ.get(PATH_SETTING) or ""
    if not raw:
        raise ValueError(f"{PATH_SETTING} is not set: the object-storage XCom backend needs a "
                         "place (file:///path, s3://conn@bucket/prefix) to write large values to")
    if "://" not in raw:  # a plain folder path
        raw = Path(raw).expanduser().absolute().as_uri()
    return ObjectStoragePath(unquote(raw) if raw.startswith("file://") else raw)


def _threshold() -> int:
    raw = os.environ.get(THRESHOLD_SETTING) or "-1"
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{THRESHOLD_SETTING}={raw!r} is not a whole number of bytes") from None


def _compression() -> tuple[str, Any] | None:
    name = (os.environ.get(COMPRESSION_SETTING) or "").strip().lower()
    if not name or name == "none":
        return None
    if name not in _COMPRESSIONS:
        raise ValueError(f"{COMPRESSION_SETTING}={name!r}: use one of gzip, bz2, lzma")
    return _COMPRESSIONS[name]


def is_reference(data: Any) -> bool:
    return type(data) is dict and data.get(serde.TYPE_KEY) == REFERENCE


class XComObjectStorageBackend(BaseXCom):
    """Values at or above the threshold are written to files; the database keeps a reference."""

    @staticmethod
    def serialize_value(value: Any, *, key: str | None = None, task_id: str | None = None,
                        dag_id: str | None = None, run_id: str | None = None,
                        map_index: int | None = None) -> Any:
        data = serde.serialize(value)
        encoded = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
        threshold = _threshold()
        if threshold < 0 or len(encoded) < threshold:
            return data
        compression = _compression()
        folder = _base_path().joinpath(dag_id or "NO_DAG_ID", run_id or "NO_RUN_ID",
                                       task_id or "NO_TASK_ID")
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{uuid.uuid4()}.json{compression[0] if compression else ''}"
        target.write_bytes(compression[1].compress(encoded) if compression else encoded)
        reference: dict[str, Any] = {serde.TYPE_KEY: REFERENCE, "value": str(target),
                                     "bytes": len(encoded)}
        if isinstance(value, list | tuple | dict):
            reference["length"] = len(value)
        return reference

    @staticmethod
    def deserialize_value(result: Any) -> Any:
        data = result.value
        if not is_reference(data):
            return BaseXCom.deserialize_value(result)
        path = _checked_path(data["value"])
        raw = path.read_bytes()
        for suffix, module in _COMPRESSIONS.values():
            if path.name.endswith(suffix):
                raw = module.decompress(raw)
                break
        return serde.deserialize(json.loads(raw))

    @staticmethod
    def orm_deserialize_value(result: Any) -> Any:
        data = result.value
        if is_reference(data):
            return {"stored_at": data["value"], "bytes": data.get("bytes")}
        return BaseXCom.orm_deserialize_value(result)

    @classmethod
    def purge(cls, result: Any, *args: Any) -> None:
        if is_reference(result.value):
            _checked_path(result.value["value"]).unlink(missing_ok=True)


def _checked_path(url: str) -> ObjectStoragePath:
    """The stored object a reference names, under the configured path (with its connection)."""
    base = _base_path()
    try:
        relative = ObjectStoragePath(url).relative_to(base)
    except (ValueError, TypeError):
        relative = None
    if relative is None or ".." in relative.parts or not relative.parts:
        raise ValueError(f"the XCom reference {url!r} points outside {PATH_SETTING} ({base})")
    return base.joinpath(str(relative))
