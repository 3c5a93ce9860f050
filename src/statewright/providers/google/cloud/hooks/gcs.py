"""``GCSHook``: buckets and objects in Google Cloud Storage (Airflow's google provider), with
the ``google-cloud-storage`` client library.

The connection is a ``google_cloud_platform`` one (see ``GoogleBaseHook``). To reach an
emulator (``gcp-storage-emulator``, ``fake-gcs-server``), set ``STORAGE_EMULATOR_HOST`` to its
URL, as for the client library itself; the credentials are then anonymous unless the connection
names a key. Methods take the bucket and the object name apart, as Airflow's; a ``gs://`` URL
is split with ``_parse_gcs_url``.
"""

from __future__ import annotations

import gzip as gz
import os
import shutil
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from io import BytesIO
from tempfile import NamedTemporaryFile
from typing import IO, Any, ClassVar
from urllib.parse import urlsplit

from statewright.providers.google.common.hooks.base_google import (
    PROVIDE_PROJECT_ID,
    GoogleBaseHook,
)

__all__ = ["GCSHook", "_parse_gcs_url", "gcs_object_is_directory"]

DEFAULT_TIMEOUT = 60
_Names = list[str]  # (inside GCSHook, ``list`` is the method)


def _parse_gcs_url(gsurl: str) -> tuple[str, str]:
    """``gs://bucket/a/b`` → ``("bucket", "a/b")``."""
    parts = urlsplit(gsurl)
    if not parts.netloc:
        raise ValueError("Please provide a bucket name")
    if parts.scheme.lower() != "gs":
        raise ValueError(f"Schema must be to 'gs://': Current schema: '{parts.scheme}://'")
    return parts.netloc, parts.path.lstrip("/")


def gcs_object_is_directory(bucket: str) -> bool:
    """Whether a ``gs://bucket/path`` URL names a directory (its object part ends with ``/``
    or is empty)."""
    _, blob = _parse_gcs_url(bucket)
    return len(blob) == 0 or blob.endswith("/")


def _aware(ts: datetime) -> datetime:
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


class GCSHook(GoogleBaseHook):
    hook_name: ClassVar[str] = "Google Cloud Storage"

    def __init__(self, gcp_conn_id: str = "google_cloud_default",
                 impersonation_chain: str | Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(gcp_conn_id=gcp_conn_id, impersonation_chain=impersonation_chain,
                         **kwargs)
        self._conn: Any = None

    def get_conn(self) -> Any:
        """The ``google.cloud.storage.Client``, made once."""
        if self._conn is None:
            from google.cloud import storage  # type: ignore[attr-defined]

            credentials, project = self.get_credentials_and_project_id()
            self._conn = storage.Client(credentials=credentials, project=project,
                                        client_options=self.get_client_options())
        return self._conn

    def _blob(self, bucket_name: str, object_name: str, user_project: str | None = None,
              chunk_size: int | None = None) -> Any:
        bucket = self.get_conn().bucket(bucket_name, user_project=user_project)
        return bucket.blob(blob_name=object_name, chunk_size=chunk_size)

    def _get_blob(self, bucket_name: str, object_name: str) -> Any:
        blob = self.get_conn().bucket(bucket_name).get_blob(blob_name=object_name)
        if blob is None:
            raise ValueError(f"Object ({object_name}) not found in Bucket ({bucket_name})")
        return blob

    def _with_retries(self, call: Callable[[], Any], attempts: int, what: str) -> Any:
        from google.cloud.exceptions import GoogleCloudError

        for attempt in range(1, max(attempts, 1) + 1):
            try:
                return call()
            except GoogleCloudError:
                if attempt >= attempts:
                    self.log.error("%s has failed. Attempt: %s, max %s.", what, attempt,
                                   attempts)
                    raise
                time.sleep(2 ** (attempt - 1))  # back-off between attempts at the server
        return None

    # -- copying ----------------------------------------------------------------------------------

    def copy(self, source_bucket: str, source_object: str,
             destination_bucket: str | None = None,
             destination_object: str | None = None) -> None:
        """Copy an object (to another bucket and/or name; not both left out)."""
        destination_bucket = destination_bucket or source_bucket
        destination_object = destination_object or source_object
        _check_copy(source_bucket, source_object, destination_bucket, destination_object)
        client = self.get_conn()
        src = client.bucket(source_bucket)
        src.copy_blob(blob=src.blob(source_object),
                      destination_bucket=client.bucket(destination_bucket),
                      new_name=destination_object)
        self.log.info("Object %s in bucket %s copied to object %s in bucket %s", source_object,
                      source_bucket, destination_object, destination_bucket)

    def rewrite(self, source_bucket: str, source_object: str, destination_bucket: str,
                destination_object: str | None = None, retain_until_time: datetime | None = None,
                retention_mode: str | None = None) -> None:
        """Copy an object with the rewrite call (any size, across locations and storage
        classes), following its continuation tokens."""
        destination_object = destination_object or source_object
        _check_copy(source_bucket, source_object, destination_bucket, destination_object)
        if retention_mode is not None and retain_until_time is None:
            raise ValueError("retention_mode cannot be set without retain_until_time.")
        if retention_mode is not None and retention_mode not in ("Locked", "Unlocked"):
            raise ValueError(f"retention_mode must be 'Locked' or 'Unlocked', got "
                             f"{retention_mode!r}.")
        client = self.get_conn()
        source = client.bucket(source_bucket).blob(blob_name=source_object)
        target = client.bucket(destination_bucket).blob(blob_name=destination_object)
        token, written, total = target.rewrite(source=source)
        self.log.info("Total Bytes: %s | Bytes Written: %s", total, written)
        while token is not None:
            token, written, total = target.rewrite(source=source, token=token)
            self.log.info("Total Bytes: %s | Bytes Written: %s", total, written)
        if retain_until_time is not None:
            target.retention.mode = retention_mode or "Unlocked"
            target.retention.retain_until_time = retain_until_time
            target.patch()
        self.log.info("Object %s in bucket %s rewritten to object %s in bucket %s",
                      source_object, source_bucket, destination_object, destination_bucket)

    # -- reading and writing ----------------------------------------------------------------------

    def download(self, bucket_name: str, object_name: str, filename: str | None = None,
                 chunk_size: int | None = None, timeout: int | None = DEFAULT_TIMEOUT,
                 num_max_attempts: int | None = 1, user_project: str | None = None) -> Any:
        """Write the object to ``filename`` (returning it), or return its bytes."""
        blob = self._blob(bucket_name, object_name, user_project, chunk_size)

        def fetch() -> str | bytes:
            if filename:
                blob.download_to_filename(filename, timeout=timeout)
                self.log.info("File downloaded to %s", filename)
                return filename
            return bytes(blob.download_as_bytes(timeout=timeout))

        return self._with_retries(fetch, 3 if num_max_attempts is None else num_max_attempts,
                                  f"Download attempt of object: {object_name} from "
                                  f"{bucket_name}")

    def download_as_byte_array(self, bucket_name: str, object_name: str,
                               chunk_size: int | None = None,
                               timeout: int | None = DEFAULT_TIMEOUT,
                               num_max_attempts: int | None = 1) -> bytes:
        return bytes(self.download(bucket_name, object_name, None, chunk_size, timeout,
                                   num_max_attempts))

    def upload(self, bucket_name: str, object_name: str, filename: str | None = None,
               data: str | bytes | None = None, mime_type: str | None = None,
               gzip: bool = False, encoding: str = "utf-8", chunk_size: int | None = None,
               timeout: int | None = DEFAULT_TIMEOUT, num_max_attempts: int = 1,
               metadata: dict[str, Any] | None = None, cache_control: str | None = None,
               user_project: str | None = None) -> None:
        """Upload a local file (``filename``) or ``data``; ``gzip`` compresses it first."""
        if filename is not None and data is not None:
            raise ValueError("'filename' and 'data' parameter provided. Please specify a single "
                             "parameter, either 'filename' for local file uploads or 'data' "
                             "for file content uploads.")
        if filename is None and data is None:
            raise ValueError("'filename' and 'data' parameter missing. One is required to "
                             "upload to gcs.")
        blob = self._blob(bucket_name, object_name, user_project, chunk_size)
        if metadata:
            blob.metadata = metadata
        if cache_control:
            blob.cache_control = cache_control
        what = f"Upload attempt of object: {object_name} to {bucket_name}"
        if filename is not None:
            mime = mime_type or "application/octet-stream"
            source = filename + ".gz" if gzip else filename
            if gzip:
                with open(filename, "rb") as f_in, gz.open(source, "wb") as f_out:
                    shutil.copyfileobj(f_in, f_out)
            try:
                self._with_retries(lambda: blob.upload_from_filename(
                    filename=source, content_type=mime, timeout=timeout), num_max_attempts, what)
            finally:
                if gzip:
                    os.remove(source)
            self.log.info("File %s uploaded to %s in %s bucket", filename, object_name,
                          bucket_name)
            return
        payload = data.encode(encoding) if isinstance(data, str) and gzip else data
        if gzip:
            out = BytesIO()
            with gz.GzipFile(fileobj=out, mode="w") as handle:
                handle.write(payload)  # type: ignore[arg-type]
            payload = out.getvalue()
        self._with_retries(lambda: blob.upload_from_string(
            payload, content_type=mime_type or "text/plain", timeout=timeout),
            num_max_attempts, what)
        self.log.info("Data stream uploaded to %s in %s bucket", object_name, bucket_name)

    @contextmanager
    def provide_file(self, bucket_name: str | None = None, object_name: str | None = None,
                     object_url: str | None = None, dir: str | None = None,
                     user_project: str | None = None) -> Generator[IO[bytes], None, None]:
        """Download the object to a temporary file and yield the open file."""
        bucket_name, object_name = _bucket_object(bucket_name, object_name, object_url)
        with NamedTemporaryFile(suffix=object_name.rpartition("/")[2], dir=dir) as tmp:
            self.download(bucket_name=bucket_name, object_name=object_name, filename=tmp.name,
                          user_project=user_project)
            tmp.flush()
            yield tmp

    @contextmanager
    def provide_file_and_upload(self, bucket_name: str | None = None,
                                object_name: str | None = None, object_url: str | None = None,
                                user_project: str | None = None
                                ) -> Generator[IO[bytes], None, None]:
        """Yield a temporary file whose content is uploaded as the object when the block
        ends."""
        bucket_name, object_name = _bucket_object(bucket_name, object_name, object_url)
        with NamedTemporaryFile(suffix=object_name.rpartition("/")[2]) as tmp:
            yield tmp
            tmp.flush()
            self.upload(bucket_name=bucket_name, object_name=object_name, filename=tmp.name,
                        user_project=user_project)

    # -- objects ----------------------------------------------------------------------------------

    def exists(self, bucket_name: str, object_name: str, retry: Any = None,
               user_project: str | None = None) -> bool:
        blob = self._blob(bucket_name, object_name, user_project)
        return bool(blob.exists() if retry is None else blob.exists(retry=retry))

    def get_blob_update_time(self, bucket_name: str, object_name: str) -> datetime | None:
        updated: datetime | None = self._get_blob(bucket_name, object_name).updated
        return updated

    def is_updated_after(self, bucket_name: str, object_name: str, ts: datetime) -> bool:
        updated = self.get_blob_update_time(bucket_name, object_name)
        return updated is not None and updated > _aware(ts)

    def is_updated_between(self, bucket_name: str, object_name: str, min_ts: datetime,
                           max_ts: datetime) -> bool:
        updated = self.get_blob_update_time(bucket_name, object_name)
        return updated is not None and _aware(min_ts) <= updated < _aware(max_ts)

    def is_updated_before(self, bucket_name: str, object_name: str, ts: datetime) -> bool:
        updated = self.get_blob_update_time(bucket_name, object_name)
        return updated is not None and updated < _aware(ts)

    def is_older_than(self, bucket_name: str, object_name: str, seconds: int) -> bool:
        updated = self.get_blob_update_time(bucket_name, object_name)
        return updated is not None and updated < datetime.now(UTC) - timedelta(seconds=seconds)

    def delete(self, bucket_name: str, object_name: str, ignore_error: bool = False) -> None:
        """Delete an object; a missing one fails unless ``ignore_error``."""
        from google.cloud.exceptions import NotFound

        try:
            self._blob(bucket_name, object_name).delete()
            self.log.info("Blob %s deleted.", object_name)
        except NotFound:
            self.log.warning("Blob %s in bucket %s does not exist.", object_name, bucket_name)
            if not ignore_error:
                raise

    def get_size(self, bucket_name: str, object_name: str) -> int:
        return int(self._get_blob(bucket_name, object_name).size)

    def get_crc32c(self, bucket_name: str, object_name: str) -> str:
        return str(self._get_blob(bucket_name, object_name).crc32c)

    def get_md5hash(self, bucket_name: str, object_name: str) -> str:
        return str(self._get_blob(bucket_name, object_name).md5_hash)

    def get_metadata(self, bucket_name: str, object_name: str) -> dict[str, Any] | None:
        metadata: dict[str, Any] | None = self._get_blob(bucket_name, object_name).metadata
        return metadata

    def compose(self, bucket_name: str, source_objects: list[str],
                destination_object: str) -> None:
        """Concatenate ``source_objects`` (in order) into ``destination_object``."""
        if not source_objects:
            raise ValueError("source_objects cannot be empty.")
        if not bucket_name or not destination_object:
            raise ValueError("bucket_name and destination_object cannot be empty.")
        bucket = self.get_conn().bucket(bucket_name)
        bucket.blob(destination_object).compose(
            sources=[bucket.blob(blob_name=name) for name in source_objects])

    # -- listing ----------------------------------------------------------------------------------

    def list(self, bucket_name: str, versions: bool | None = None,
             max_results: int | None = None, prefix: str | list[str] | None = None,
             delimiter: str | None = None, match_glob: str | None = None,
             user_project: str | None = None) -> list[str]:
        """The names of the objects under ``prefix`` (or each of a list of prefixes), matching
        ``match_glob``; with a ``delimiter``, the common prefixes when there are any."""
        if match_glob and delimiter and delimiter != "/":
            raise ValueError("'match_glob' param cannot be used with 'delimiter' that differs "
                             "than '/'")
        prefixes = prefix if isinstance(prefix, list) else [prefix]
        found: list[str] = []
        for one in prefixes:
            found += self._list(bucket_name, versions, max_results, one, delimiter, match_glob,
                                user_project)
        return found

    def list_by_timespan(self, bucket_name: str, timespan_start: datetime,
                         timespan_end: datetime, versions: bool | None = None,
                         max_results: int | None = None, prefix: str | None = None,
                         delimiter: str | None = None,
                         match_glob: str | None = None) -> _Names:
        """As ``list``, keeping the objects updated in ``[timespan_start, timespan_end)``."""
        start, end = _aware(timespan_start), _aware(timespan_end)
        return self._list(bucket_name, versions, max_results, prefix, delimiter, match_glob,
                          None, lambda blob: start <= _aware(blob.updated) < end)

    def _list(self, bucket_name: str, versions: bool | None, max_results: int | None,
              prefix: str | None, delimiter: str | None, match_glob: str | None,
              user_project: str | None,
              keep: Callable[[Any], bool] | None = None) -> _Names:
        bucket = self.get_conn().bucket(bucket_name, user_project=user_project)
        blobs = bucket.list_blobs(max_results=max_results, prefix=prefix, delimiter=delimiter,
                                  versions=versions, match_glob=match_glob)
        names = [blob.name for blob in blobs if keep is None or keep(blob)]
        return sorted(blobs.prefixes) if blobs.prefixes else names

    # -- buckets ----------------------------------------------------------------------------------

    def get_bucket(self, bucket_name: str) -> Any:
        return self.get_conn().bucket(bucket_name)

    @GoogleBaseHook.fallback_to_default_project_id
    def create_bucket(self, bucket_name: str, resource: dict[str, Any] | None = None,
                      storage_class: str = "MULTI_REGIONAL", location: str = "US",
                      project_id: str = PROVIDE_PROJECT_ID,
                      labels: dict[str, str] | None = None) -> str:
        """Create a bucket (``resource``: more bucket fields of the JSON API); returns its
        id."""
        self.log.info("Creating Bucket: %s; Location: %s; Storage Class: %s", bucket_name,
                      location, storage_class)
        bucket = self.get_conn().bucket(bucket_name=bucket_name)
        for name, value in (resource or {}).items():
            if name != "name":
                bucket._patch_property(name=name, value=value)
        bucket.storage_class = storage_class
        bucket.labels = dict(labels or {})
        bucket.create(project=project_id, location=location)
        return str(bucket.id)

    def delete_bucket(self, bucket_name: str, force: bool = False,
                      user_project: str | None = None) -> None:
        """Delete a bucket (``force``: with its objects); a missing bucket is logged."""
        from google.cloud.exceptions import NotFound

        self.log.info("Deleting %s bucket", bucket_name)
        try:
            self.get_conn().bucket(bucket_name, user_project=user_project).delete(force=force)
            self.log.info("Bucket %s has been deleted", bucket_name)
        except NotFound:
            self.log.info("Bucket %s not exists", bucket_name)


def _check_copy(source_bucket: str, source_object: str, destination_bucket: str,
                destination_object: str) -> None:
    if source_bucket == destination_bucket and source_object == destination_object:
        raise ValueError("Either source/destination bucket or source/destination object must "
                         f"be different, not both the same: bucket={source_bucket}, "
                         f"object={source_object}")
    if not source_bucket or not source_object:
        raise ValueError("source_bucket and source_object cannot be empty.")


def _bucket_object(bucket_name: str | None, object_name: str | None,
                   object_url: str | None) -> tuple[str, str]:
    if object_url:
        if bucket_name or object_name:
            raise ValueError("The mutually exclusive parameters. `object_url`, `bucket_name` "
                             "together with `object_name` parameters are present. Please "
                             "provide `object_url` or `bucket_name` and `object_name`.")
        return _parse_gcs_url(object_url)
    if not bucket_name or not object_name:
        raise ValueError("Object name can not be empty")
    return bucket_name, object_name
