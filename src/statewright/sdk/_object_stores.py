"""The stores behind ``ObjectStoragePath``: the local file system and S3 (through ``S3Hook``,
so an ``aws`` connection's credentials, region and ``endpoint_url`` apply).

A store speaks in plain strings: a local store in absolute paths, an S3 store in
``(bucket, key)`` pairs with ``/``-separated keys. Directories in S3 are prefixes: a "directory"
exists when some key lies under it.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

__all__ = ["Entry", "LocalStore", "S3Store"]


class Entry(dict[str, Any]):
    """What a store knows of one path: ``name``, ``type`` (``file``/``directory``), ``size``,
    ``mtime`` (a timestamp or None)."""


class LocalStore:
    protocol = "file"

    def info(self, path: str) -> Entry | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        kind = "directory" if os.path.isdir(path) else "file"
        return Entry(name=path, type=kind, size=st.st_size, mtime=st.st_mtime)

    def open(self, path: str, mode: str, **kwargs: Any) -> IO[Any]:
        if any(m in mode for m in "wax"):
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return open(path, mode, **kwargs)  # the caller closes it

    def listdir(self, path: str) -> list[tuple[str, bool]]:
        with os.scandir(path) as listing:
            return sorted((e.name, e.is_dir()) for e in listing)

    def files_under(self, path: str) -> Iterator[str]:
        """Every file under ``path``, as paths relative to it."""
        for root, _dirs, names in os.walk(path):
            for name in names:
                yield os.path.relpath(os.path.join(root, name), path).replace(os.sep, "/")

    def mkdir(self, path: str, parents: bool, exist_ok: bool) -> None:
        Path(path).mkdir(parents=parents, exist_ok=exist_ok)

    def remove(self, path: str) -> None:
        os.remove(path)

    def rmdir(self, path: str, recursive: bool) -> None:
        if recursive:
            shutil.rmtree(path)
        else:
            os.rmdir(path)

    def rename(self, src: str, dst: str) -> None:
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        shutil.move(src, dst)

    def copy_file(self, src: str, dst: str) -> None:
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        shutil.copyfile(src, dst)


class _UploadOnClose(io.BytesIO):
    """A writable buffer whose content becomes the object when it is closed."""

    def __init__(self, store: S3Store, bucket: str, key: str, initial: bytes = b"") -> None:
        super().__init__(initial)
        self.seek(0, io.SEEK_END)
        self._target = (store, bucket, key)

    def close(self) -> None:
        if not self.closed:
            store, bucket, key = self._target
            store.client.put_object(Bucket=bucket, Key=key, Body=self.getvalue())
        super().close()


class S3Store:
    protocol = "s3"

    def __init__(self, conn_id: str | None) -> None:
        from statewright.providers.amazon.aws.hooks.s3 import S3Hook

        self.conn_id = conn_id
        self.hook = S3Hook(aws_conn_id=conn_id)
        self.client = self.hook.get_conn()

    def _objects(self, bucket: str, prefix: str, delimiter: str = "") -> Iterator[dict[str, Any]]:
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix, Delimiter=delimiter):
            yield from ({"Prefix": p["Prefix"]} for p in page.get("CommonPrefixes", ()))
            yield from page.get("Contents", ())

    def info(self, bucket: str, key: str) -> Entry | None:
        if not key:
            return Entry(name=bucket, type="directory", size=0, mtime=None) \
                if self.hook.check_for_bucket(bucket) else None
        head = self.hook.head_object(key, bucket)
        if head is not None:
            modified = head.get("LastModified")
            return Entry(name=f"{bucket}/{key}", type="file", size=head.get("ContentLength", 0),
                         mtime=modified.timestamp() if isinstance(modified, datetime) else None,
                         ETag=head.get("ETag"), LastModified=modified)
        if self.hook.check_for_bucket(bucket) and next(
                self._objects(bucket, key.rstrip("/") + "/"), None) is not None:
            return Entry(name=f"{bucket}/{key}", type="directory", size=0, mtime=None)
        return None

    def open(self, bucket: str, key: str, mode: str) -> IO[bytes]:
        if "r" in mode and "+" not in mode:
            from botocore.exceptions import ClientError

            try:
                body = self.client.get_object(Bucket=bucket, Key=key)["Body"].read()
            except ClientError as exc:
                raise FileNotFoundError(f"s3://{bucket}/{key}: {exc}") from None
            return io.BytesIO(body)
        if "x" in mode and self.info(bucket, key) is not None:
            raise FileExistsError(f"s3://{bucket}/{key}")
        initial = b""
        if "a" in mode and self.hook.head_object(key, bucket) is not None:
            initial = self.client.get_object(Bucket=bucket, Key=key)["Body"].read()
        return _UploadOnClose(self, bucket, key, initial)

    def listdir(self, bucket: str, key: str) -> list[tuple[str, bool]]:
        prefix = key.rstrip("/") + "/" if key else ""
        out = []
        for obj in self._objects(bucket, prefix, "/"):
            if "Prefix" in obj:
                out.append((obj["Prefix"][len(prefix):].rstrip("/"), True))
            elif obj["Key"] != prefix:  # a "directory marker" object is not an entry
                out.append((obj["Key"][len(prefix):], False))
        return sorted(out)

    def files_under(self, bucket: str, key: str) -> Iterator[str]:
        prefix = key.rstrip("/") + "/" if key else ""
        for obj in self._objects(bucket, prefix):
            if obj["Key"] != prefix:
                yield obj["Key"][len(prefix):]

    def mkdir(self, bucket: str, key: str, parents: bool, exist_ok: bool) -> None:
        exists = self.hook.check_for_bucket(bucket)
        if not key:
            if exists and not exist_ok:
                raise FileExistsError(f"s3://{bucket}")
            if not exists:
                self.hook.create_bucket(bucket)
            return
        if not exists:
            if not parents:
                raise FileNotFoundError(f"s3://{bucket} does not exist (mkdir parents=True "
                                        "creates it)")
            self.hook.create_bucket(bucket)
        entry = self.info(bucket, key)
        if entry is not None and (entry["type"] == "file" or not exist_ok):
            raise FileExistsError(f"s3://{bucket}/{key}")
        # S3 has no directories: one exists once a key lies under it.

    def remove(self, bucket: str, key: str) -> None:
        self.client.delete_object(Bucket=bucket, Key=key)

    def rmdir(self, bucket: str, key: str, recursive: bool) -> None:
        keys = [f"{key.rstrip('/')}/{k}" if key else k for k in self.files_under(bucket, key)]
        if keys and not recursive:
            raise OSError(f"s3://{bucket}/{key} is not empty")
        if keys:
            self.hook.delete_objects(bucket, keys)
        if not key:
            self.client.delete_bucket(Bucket=bucket)

    def copy_file(self, src: tuple[str, str], dst: tuple[str, str]) -> None:
        self.client.copy_object(Bucket=dst[0], Key=dst[1],
                                CopySource={"Bucket": src[0], "Key": src[1]})
