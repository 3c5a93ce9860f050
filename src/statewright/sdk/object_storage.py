"""``ObjectStoragePath``: a pathlib-like path to a local file or an object in S3 or Google Cloud
Storage (Airflow 3's
``airflow.sdk.ObjectStoragePath``, Airflow 2.8's ``airflow.io.path.ObjectStoragePath``).

    base = ObjectStoragePath("s3://aws_default@my-bucket/data/")   # the connection in the URL
    base = ObjectStoragePath("s3://my-bucket/data/", conn_id="aws_default")  # or as argument
    (base / "x.csv").write_text("a,b")
    [p.name for p in base.iterdir()]

``file://`` (or a plain absolute path) is the local file system; ``s3://`` reaches S3 or an
S3-compatible server through the ``aws`` connection ``conn_id`` (its key id and secret, region
and ``endpoint_url``; without a connection, boto3's own credentials). ``key`` is the path without
the bucket and without a leading ``/``; ``bucket`` (``container``) the bucket (empty locally).
``gs://`` reaches Cloud Storage through the ``google_cloud_platform`` connection ``conn_id``
(``google_cloud_default`` when none is named; ``STORAGE_EMULATOR_HOST`` reaches an emulator).
Copying a file into a directory puts it at ``directory / key``, as in Airflow.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import posixpath
import re
import stat as stat_module
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO, Any, ClassVar
from urllib.parse import urlsplit

from statewright.sdk._gcs_store import GCSStore
from statewright.sdk._object_stores import Entry, LocalStore, S3Store

__all__ = ["ObjectStoragePath"]

_PROTOCOLS = {"file": "file", "local": "file", "s3": "s3", "s3a": "s3", "gs": "gs", "gcs": "gs"}
_BUCKET_STORES = (S3Store, GCSStore)
Store = LocalStore | S3Store | GCSStore


@functools.cache
def attach(protocol: str = "file", conn_id: str | None = None) -> Store:
    """The store of ``protocol`` with connection ``conn_id`` (one per process)."""
    kind = _PROTOCOLS.get(protocol)
    if kind is None:
        raise ValueError(f"ObjectStoragePath: protocol {protocol!r} is not supported (use "
                         f"{', '.join(sorted(_PROTOCOLS))})")
    if kind == "file":
        return LocalStore()
    return S3Store(conn_id) if kind == "s3" else GCSStore(conn_id)


class _StatResult(dict[str, Any]):
    """``stat()``: the store's entry as a dict, with ``os.stat_result``'s ``st_*`` names."""

    @property
    def st_size(self) -> int:
        return int(self.get("size") or 0)

    @property
    def st_mtime(self) -> float | None:
        mtime = self.get("mtime")
        return float(mtime) if mtime is not None else None

    @property
    def st_mode(self) -> int:
        return stat_module.S_IFDIR if self.get("type") == "directory" else stat_module.S_IFREG


class ObjectStoragePath:
    sep = "/"
    __version__: ClassVar[int] = 1
    """The version of ``serialize()``'s form (stored with it by the XCom serializer)."""
    __slots__ = ("_bucket", "_path", "_protocol", "_trailing_sep", "conn_id", "storage_options")

    def __init__(self, *args: Any, conn_id: str | None = None, protocol: str | None = None,
                 **storage_options: Any) -> None:
        if not args:
            raise TypeError("ObjectStoragePath needs a path or URL")
        first, rest = args[0], [str(a) for a in args[1:]]
        if isinstance(first, ObjectStoragePath):
            self._protocol, self._bucket = first._protocol, first._bucket
            path, conn_id = first._path, conn_id or first.conn_id
        else:
            text = str(first)
            parts = urlsplit(text)
            scheme = protocol or (parts.scheme if "://" in text else "file")
            self._protocol = _PROTOCOLS.get(scheme, scheme)
            if self._protocol not in ("file", "s3", "gs"):
                attach(scheme)  # raises: not supported
            if self._protocol == "file":
                self._bucket = ""
                path = PurePosixPath(parts.path if "://" in text else text)
            else:
                user, _, host = parts.netloc.rpartition("@")
                self._bucket, conn_id = host, conn_id or user or None
                path = PurePosixPath("/" + parts.path.lstrip("/"))
        for segment in rest:
            path = path / segment.lstrip("/") if self._protocol != "file" else path / segment
        self._path = path
        # "s3://bucket/dir/" (or gs://) names a directory (a file copied to it lands inside)
        self._trailing_sep = str(args[-1]).endswith(self.sep)
        self.conn_id = conn_id
        self.storage_options = dict(storage_options)

    # -- names --------------------------------------------------------------------------------

    @property
    def protocol(self) -> str:
        return self._protocol

    @property
    def bucket(self) -> str:
        return self._bucket

    container = bucket

    @property
    def key(self) -> str:
        return str(self._path).lstrip("/") if str(self._path) != "." else ""

    @property
    def path(self) -> str:
        """The path in the store: ``bucket/key`` in a bucket, the absolute path locally."""
        return f"{self._bucket}/{self.key}" if self._protocol != "file" else str(self._path)

    @property
    def namespace(self) -> str:
        return f"{self._protocol}://{self._bucket}" if self._bucket else self._protocol

    @property
    def fs(self) -> Store:
        return attach(self._protocol, self.conn_id)

    def __str__(self) -> str:
        if self._protocol != "file":
            return f"{self._protocol}://{self._bucket}/{self.key}"
        return f"file://{self._path}"

    def __repr__(self) -> str:
        conn = f", conn_id={self.conn_id!r}" if self.conn_id else ""
        return f"ObjectStoragePath({str(self)!r}{conn})"

    def __fspath__(self) -> str:
        if self._protocol != "file":
            raise TypeError(f"{self!r} is not a local path; open it with .open()")
        return str(self._path)

    def _with(self, path: PurePosixPath) -> ObjectStoragePath:
        new = object.__new__(ObjectStoragePath)
        new._protocol, new._bucket, new._path = self._protocol, self._bucket, path
        new.conn_id, new.storage_options = self.conn_id, dict(self.storage_options)
        new._trailing_sep = False
        return new

    def _same_place(self) -> tuple[str, str, str, str | None]:
        return (self._protocol, self._bucket, str(self._path), self.conn_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectStoragePath) and self._same_place() == other._same_place()

    def __hash__(self) -> int:
        return hash(self._same_place())

    def __lt__(self, other: ObjectStoragePath) -> bool:
        return str(self) < str(other)

    def __truediv__(self, other: Any) -> ObjectStoragePath:
        joined = self.joinpath(other)
        joined._trailing_sep = str(other).endswith(self.sep)
        return joined

    def joinpath(self, *others: Any) -> ObjectStoragePath:
        path = self._path
        for other in others:
            text = str(other.key if isinstance(other, ObjectStoragePath) else other)
            path = path / (text.lstrip("/") if self._protocol != "file" else text)
        return self._with(path)

    @property
    def name(self) -> str:
        return self._path.name

    @property
    def stem(self) -> str:
        return self._path.stem

    @property
    def suffix(self) -> str:
        return self._path.suffix

    @property
    def suffixes(self) -> list[str]:
        return self._path.suffixes

    @property
    def parts(self) -> tuple[str, ...]:
        return self._path.parts

    @property
    def parent(self) -> ObjectStoragePath:
        return self._with(self._path.parent)

    @property
    def parents(self) -> list[ObjectStoragePath]:
        return [self._with(p) for p in self._path.parents]

    def with_name(self, name: str) -> ObjectStoragePath:
        return self._with(self._path.with_name(name))

    def with_suffix(self, suffix: str) -> ObjectStoragePath:
        return self._with(self._path.with_suffix(suffix))

    def with_stem(self, stem: str) -> ObjectStoragePath:
        return self._with(self._path.with_stem(stem))

    def relative_to(self, other: ObjectStoragePath | str) -> PurePosixPath:
        base = other if isinstance(other, ObjectStoragePath) else ObjectStoragePath(other)
        if base.bucket != self.bucket or base.protocol != self.protocol:
            raise ValueError(f"{self} is not under {base}")
        return self._path.relative_to(base._path)

    def is_relative_to(self, other: ObjectStoragePath | str) -> bool:
        try:
            self.relative_to(other)
        except ValueError:
            return False
        return True

    def match(self, pattern: str) -> bool:
        return self._path.match(pattern)

    def samestore(self, other: ObjectStoragePath) -> bool:
        return self._protocol == other._protocol and self.conn_id == other.conn_id

    # -- what is there ------------------------------------------------------------------------

    def _info(self) -> Entry | None:
        store = self.fs
        if isinstance(store, _BUCKET_STORES):
            return store.info(self._bucket, self.key)
        return store.info(str(self._path))

    def exists(self) -> bool:
        return self._info() is not None

    def is_file(self) -> bool:
        entry = self._info()
        return entry is not None and entry["type"] == "file"

    def is_dir(self) -> bool:
        entry = self._info()
        return entry is not None and entry["type"] == "directory"

    def stat(self) -> _StatResult:
        entry = self._info()
        if entry is None:
            raise FileNotFoundError(str(self))
        return _StatResult(entry)

    def size(self) -> int:
        return self.stat().st_size

    def iterdir(self) -> Iterator[ObjectStoragePath]:
        store = self.fs
        entries = (store.listdir(self._bucket, self.key) if isinstance(store, _BUCKET_STORES)
                   else store.listdir(str(self._path)))
        for name, _is_dir in entries:
            yield self / name

    def _files_under(self) -> Iterator[str]:
        store = self.fs
        if isinstance(store, _BUCKET_STORES):
            return store.files_under(self._bucket, self.key)
        return store.files_under(str(self._path))

    def glob(self, pattern: str) -> Iterator[ObjectStoragePath]:
        """The files and directories under this path that match ``pattern`` (``*`` within a
        name, ``**`` across directories)."""
        regex = _glob_regex(pattern)
        seen: set[str] = set()
        for relative in sorted(self._files_under()):
            pieces = relative.split("/")
            for depth in range(1, len(pieces) + 1):
                candidate = "/".join(pieces[:depth])
                if candidate not in seen and regex.fullmatch(candidate):
                    seen.add(candidate)
                    yield self / candidate

    def rglob(self, pattern: str) -> Iterator[ObjectStoragePath]:
        return self.glob(f"**/{pattern}")

    # -- reading and writing ------------------------------------------------------------------

    def open(self, mode: str = "r", encoding: str | None = None, errors: str | None = None,
             newline: str | None = None, **kwargs: Any) -> IO[Any]:
        store = self.fs
        binary_mode = mode if "b" in mode else mode + "b"
        if isinstance(store, LocalStore):
            if "b" in mode:
                return store.open(str(self._path), mode)
            return store.open(str(self._path), mode, encoding=encoding or "utf-8",
                              errors=errors, newline=newline)
        raw = store.open(self._bucket, self.key, binary_mode.replace("t", ""))
        if "b" in mode:
            return raw
        return io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors=errors,  # type: ignore[type-var]
                                newline=newline)

    def read_bytes(self) -> bytes:
        with self.open("rb") as handle:
            return bytes(handle.read())

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        with self.open("r", encoding=encoding, errors=errors) as handle:
            return str(handle.read())

    def write_bytes(self, data: bytes) -> int:
        with self.open("wb") as handle:
            handle.write(data)
        return len(data)

    def write_text(self, data: str, encoding: str | None = None, errors: str | None = None,
                   newline: str | None = None) -> int:
        with self.open("w", encoding=encoding, errors=errors, newline=newline) as handle:
            handle.write(data)
        return len(data)

    def touch(self, exist_ok: bool = True) -> None:
        if self.exists():
            if not exist_ok:
                raise FileExistsError(str(self))
            return
        self.write_bytes(b"")

    # -- changing -----------------------------------------------------------------------------

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        store = self.fs
        if isinstance(store, _BUCKET_STORES):
            store.mkdir(self._bucket, self.key, parents, exist_ok)
        else:
            store.mkdir(str(self._path), parents, exist_ok)

    def unlink(self, missing_ok: bool = False) -> None:
        if not self.exists():
            if missing_ok:
                return
            raise FileNotFoundError(str(self))
        store = self.fs
        if isinstance(store, _BUCKET_STORES):
            store.remove(self._bucket, self.key)
        else:
            store.remove(str(self._path))

    def rmdir(self, recursive: bool = True) -> None:
        store = self.fs
        if isinstance(store, _BUCKET_STORES):
            store.rmdir(self._bucket, self.key, recursive)
        else:
            store.rmdir(str(self._path), recursive)

    def copy(self, dst: str | ObjectStoragePath, recursive: bool = False,
             **kwargs: Any) -> None:
        """Copy to ``dst`` (another store too). A directory is copied with ``recursive``;
        a file copied into a directory lands at ``dst / key``."""
        target = dst if isinstance(dst, ObjectStoragePath) else ObjectStoragePath(dst)
        if self.is_dir():
            if not recursive:
                raise IsADirectoryError(f"{self} is a directory: copy it with recursive=True")
            if target.is_file():
                raise ValueError("Cannot copy directory to a file.")
            for relative in sorted(self._files_under()):
                (self / relative)._copy_file(target)
            return
        self._copy_file(target)

    def _copy_file(self, dst: ObjectStoragePath) -> None:
        if not dst.key or dst._trailing_sep or dst.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
            dst = dst / self.key
        store = self.fs
        if self.samestore(dst) and isinstance(store, _BUCKET_STORES):
            store.copy_file((self._bucket, self.key), (dst._bucket, dst.key))
        elif self.samestore(dst) and isinstance(store, LocalStore):
            store.copy_file(str(self._path), str(dst._path))
        else:
            with self.open("rb") as source, dst.open("wb") as sink:
                while chunk := source.read(8 * 1024 * 1024):
                    sink.write(chunk)

    def move(self, path: str | ObjectStoragePath, recursive: bool = False,
             **kwargs: Any) -> None:
        """Move to ``path`` (a rename within a store; a copy and a delete across stores)."""
        target = path if isinstance(path, ObjectStoragePath) else ObjectStoragePath(path)
        store = self.fs
        if self.samestore(target) and isinstance(store, LocalStore):
            store.rename(str(self._path), str(target._path))
            return
        if self.is_dir():
            for relative in sorted(self._files_under()):
                (self / relative).move(target / relative)
            return
        if self.samestore(target) and isinstance(store, _BUCKET_STORES):
            store.copy_file((self._bucket, self.key), (target._bucket, target.key))
        else:
            with self.open("rb") as source, target.open("wb") as sink:
                while chunk := source.read(8 * 1024 * 1024):
                    sink.write(chunk)
        self.unlink()

    # -- serialization (XCom) -----------------------------------------------------------------

    def serialize(self) -> dict[str, Any]:
        return {"path": str(self), "conn_id": self.conn_id,
                "kwargs": dict(self.storage_options)}

    @classmethod
    def deserialize(cls, data: dict[str, Any], version: int = 0) -> ObjectStoragePath:
        return cls(data["path"], conn_id=data.get("conn_id"), **(data.get("kwargs") or {}))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A pathlib-style pattern as a regular expression over ``/``-separated relative paths."""
    parts = posixpath.normpath(pattern).split("/")
    pieces = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            pieces.append(".*" if last else "(?:[^/]+/)*")
            continue
        body = fnmatch.translate(part).removeprefix("(?s:").removesuffix(")\\Z")
        pieces.append(body.replace(".*", "[^/]*") + ("" if last else "/"))
    return re.compile("".join(pieces))
