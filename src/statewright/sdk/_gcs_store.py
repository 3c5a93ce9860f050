"""The Cloud Storage store behind ``ObjectStoragePath("gs://...")``: through ``GCSHook``, so a
``google_cloud_platform`` connection's credentials and project apply (and
``STORAGE_EMULATOR_HOST`` reaches an emulator).

It speaks as ``S3Store`` does: ``(bucket, key)`` pairs with ``/``-separated keys; a "directory"
exists when some object lies under it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any

from statewright.sdk._object_stores import Entry

__all__ = ["GCSStore"]


class _UploadOnClose(io.BytesIO):
    """A writable buffer whose content becomes the object when it is closed."""

    def __init__(self, blob: Any, initial: bytes = b"") -> None:
        super().__init__(initial)
        self.seek(0, io.SEEK_END)
        self._blob = blob

    def close(self) -> None:
        if not self.closed:
            self._blob.upload_from_string(self.getvalue(),
                                          content_type="application/octet-stream")
        super().close()


class GCSStore:
    protocol = "gs"

    def __init__(self, conn_id: str | None) -> None:
        from statewright.providers.google.cloud.hooks.gcs import GCSHook

        self.conn_id = conn_id
        self.hook = GCSHook(gcp_conn_id=conn_id or "google_cloud_default")
        self.client = self.hook.get_conn()

    def _blobs(self, bucket: str, prefix: str, delimiter: str | None = None) -> Any:
        return self.client.bucket(bucket).list_blobs(prefix=prefix, delimiter=delimiter)

    def _bucket_exists(self, bucket: str) -> bool:
        return self.client.lookup_bucket(bucket) is not None

    def info(self, bucket: str, key: str) -> Entry | None:
        if not key:
            return (Entry(name=bucket, type="directory", size=0, mtime=None)
                    if self._bucket_exists(bucket) else None)
        blob = self.client.bucket(bucket).get_blob(key)
        if blob is not None:
            updated = blob.updated
            return Entry(name=f"{bucket}/{key}", type="file", size=blob.size or 0,
                         mtime=updated.timestamp() if updated else None,
                         md5Hash=blob.md5_hash, updated=updated)
        if self._bucket_exists(bucket) and next(
                iter(self._blobs(bucket, key.rstrip("/") + "/")), None) is not None:
            return Entry(name=f"{bucket}/{key}", type="directory", size=0, mtime=None)
        return None

    def open(self, bucket: str, key: str, mode: str) -> IO[bytes]:
        from google.cloud.exceptions import NotFound

        blob = self.client.bucket(bucket).blob(key)
        if "r" in mode and "+" not in mode:
            try:
                return io.BytesIO(blob.download_as_bytes())
            except NotFound as exc:
                raise FileNotFoundError(f"gs://{bucket}/{key}: {exc}") from None
        if "x" in mode and self.info(bucket, key) is not None:
            raise FileExistsError(f"gs://{bucket}/{key}")
        initial = blob.download_as_bytes() if "a" in mode and blob.exists() else b""
        return _UploadOnClose(blob, initial)

    def listdir(self, bucket: str, key: str) -> list[tuple[str, bool]]:
        prefix = key.rstrip("/") + "/" if key else ""
        blobs = self._blobs(bucket, prefix, "/")
        out = [(b.name[len(prefix):], False) for b in blobs if b.name != prefix]
        out += [(p[len(prefix):].rstrip("/"), True) for p in blobs.prefixes]
        return sorted(out)

    def files_under(self, bucket: str, key: str) -> Iterator[str]:
        prefix = key.rstrip("/") + "/" if key else ""
        for blob in self._blobs(bucket, prefix):
            if blob.name != prefix:
                yield blob.name[len(prefix):]

    def mkdir(self, bucket: str, key: str, parents: bool, exist_ok: bool) -> None:
        exists = self._bucket_exists(bucket)
        if not key:
            if exists and not exist_ok:
                raise FileExistsError(f"gs://{bucket}")
            if not exists:
                self.hook.create_bucket(bucket_name=bucket)
            return
        if not exists:
            if not parents:
                raise FileNotFoundError(f"gs://{bucket} does not exist (mkdir parents=True "
                                        "creates it)")
            self.hook.create_bucket(bucket_name=bucket)
        entry = self.info(bucket, key)
        if entry is not None and (entry["type"] == "file" or not exist_ok):
            raise FileExistsError(f"gs://{bucket}/{key}")
        # Cloud Storage has no directories: one exists once an object lies under it.

    def remove(self, bucket: str, key: str) -> None:
        self.hook.delete(bucket, key)

    def rmdir(self, bucket: str, key: str, recursive: bool) -> None:
        keys = [f"{key.rstrip('/')}/{k}" if key else k for k in self.files_under(bucket, key)]
        if keys and not recursive:
            raise OSError(f"gs://{bucket}/{key} is not empty")
        for name in keys:
            self.hook.delete(bucket, name, ignore_error=True)
        if not key:
            self.hook.delete_bucket(bucket)

    def copy_file(self, src: tuple[str, str], dst: tuple[str, str]) -> None:
        self.hook.copy(src[0], src[1], dst[0], dst[1])
