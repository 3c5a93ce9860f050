"""``S3Hook``: buckets and objects in S3 or an S3-compatible server (Airflow's amazon provider).

A key may be a full URL (``s3://bucket/path/file.csv``) when ``bucket_name`` is left out; the
bucket then comes from the URL. Without either, the connection's
``service_config.s3.bucket_name`` is used. Loading to a key that exists fails unless
``replace=True``, as in Airflow.
"""

from __future__ import annotations

import fnmatch
import gzip as gz
import io
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from statewright.core.errors import StatewrightError
from statewright.providers.amazon.aws.hooks.base_aws import AwsBaseHook

__all__ = ["S3Hook", "S3KeyNotFound"]

_WILDCARD = re.compile(r"[*?\[]")


class S3Hook(AwsBaseHook):
    conn_type: ClassVar[str] = "aws"
    conn_types: ClassVar[tuple[str, ...]] = ("aws", "s3")
    hook_name: ClassVar[str] = "Amazon S3"

    def __init__(self, aws_conn_id: str | None = "aws_default", verify: bool | str | None = None,
                 region_name: str | None = None, transfer_config_args: dict[str, Any] | None
                 = None, extra_args: dict[str, Any] | None = None, **kwargs: Any) -> None:
        kwargs.pop("client_type", None)
        super().__init__(aws_conn_id=aws_conn_id, verify=verify, region_name=region_name,
                         client_type="s3", **kwargs)
        self.transfer_config_args = dict(transfer_config_args or {})
        self.extra_args = dict(extra_args or {})

    # -- names ------------------------------------------------------------------------------------

    @staticmethod
    def parse_s3_url(s3url: str) -> tuple[str, str]:
        """``s3://bucket/a/b`` → ``("bucket", "a/b")``."""
        parts = urlsplit(s3url)
        if parts.scheme not in ("s3", "s3a", "s3n") or not parts.netloc:
            raise ValueError(f'Please provide a bucket name using a valid format: "{s3url}"')
        return parts.netloc, parts.path.lstrip("/")

    @staticmethod
    def get_s3_bucket_key(bucket: str | None, key: str, bucket_param_name: str,
                          key_param_name: str) -> tuple[str, str]:
        """The bucket and key of ``key`` (a URL when ``bucket`` is None)."""
        if bucket is None:
            return S3Hook.parse_s3_url(key)
        if urlsplit(key).scheme:
            raise TypeError(f"If `{key_param_name}` is provided as a full s3:// url, then "
                            f"`{bucket_param_name}` should not be passed")
        return bucket, key

    def _bucket(self, bucket_name: str | None) -> str:
        if bucket_name:
            return bucket_name
        default = self.service_config("s3").get("bucket_name")
        if not default:
            raise ValueError("S3Hook: no bucket_name given and the connection names none "
                             "(extra service_config.s3.bucket_name)")
        return str(default)

    def _bucket_key(self, key: str, bucket_name: str | None) -> tuple[str, str]:
        if bucket_name is None and urlsplit(key).scheme in ("s3", "s3a", "s3n"):
            return self.parse_s3_url(key)
        return self._bucket(bucket_name), key

    # -- buckets ----------------------------------------------------------------------------------

    def check_for_bucket(self, bucket_name: str | None = None) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.get_conn().head_bucket(Bucket=self._bucket(bucket_name))
            return True
        except ClientError as exc:
            self.log.info("Bucket %r does not exist or is not reachable: %s", bucket_name, exc)
            return False

    def get_bucket(self, bucket_name: str | None = None) -> Any:
        return self.get_resource_type("s3").Bucket(self._bucket(bucket_name))

    def create_bucket(self, bucket_name: str | None = None,
                      region_name: str | None = None) -> None:
        region = region_name or self.region_name or "us-east-1"
        kwargs: dict[str, Any] = {"Bucket": self._bucket(bucket_name)}
        if region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
        self.get_conn().create_bucket(**kwargs)

    def delete_bucket(self, bucket_name: str, force_delete: bool = False,
                      max_retries: int = 5) -> None:
        """Delete the bucket; with ``force_delete`` its objects first."""
        if force_delete:
            for _ in range(max_retries):
                keys = self.list_keys(bucket_name)
                if not keys:
                    break
                self.delete_objects(bucket_name, keys)
        self.get_conn().delete_bucket(Bucket=bucket_name)

    # -- listing ----------------------------------------------------------------------------------

    def _pages(self, bucket: str, prefix: str, delimiter: str, page_size: int | None,
               max_items: int | None, start_after_key: str | None = None
               ) -> Iterator[dict[str, Any]]:
        paginator = self.get_conn().get_paginator("list_objects_v2")
        params: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix or "",
                                  "Delimiter": delimiter or ""}
        if start_after_key:
            params["StartAfter"] = start_after_key
        yield from paginator.paginate(**params, PaginationConfig={
            "PageSize": page_size, "MaxItems": max_items})

    def list_prefixes(self, bucket_name: str | None = None, prefix: str | None = None,
                      delimiter: str | None = None, page_size: int | None = None,
                      max_items: int | None = None) -> list[str]:
        """The common prefixes ("folders") under ``prefix`` up to ``delimiter``."""
        return [p["Prefix"] for page in self._pages(self._bucket(bucket_name), prefix or "",
                                                    delimiter or "", page_size, max_items)
                for p in page.get("CommonPrefixes", ())]

    def check_for_prefix(self, prefix: str, delimiter: str,
                         bucket_name: str | None = None) -> bool:
        prefix = prefix + delimiter if not prefix.endswith(delimiter) else prefix
        parent = re.split(rf"(\w+[{re.escape(delimiter)}])$", prefix)[0]
        return prefix in self.list_prefixes(bucket_name, parent, delimiter)

    def list_keys(self, bucket_name: str | None = None, prefix: str | None = None,
                  delimiter: str | None = None, page_size: int | None = None,
                  max_items: int | None = None, start_after_key: str | None = None,
                  from_datetime: datetime | None = None, to_datetime: datetime | None = None,
                  object_filter: Callable[..., list[Any]] | None = None,
                  apply_wildcard: bool = False) -> list[str]:
        """The keys under ``prefix`` (with ``apply_wildcard``, ``prefix`` is a shell pattern);
        ``from_datetime``/``to_datetime`` keep the objects last modified in that window."""
        pattern = prefix or ""
        head = _WILDCARD.split(pattern, maxsplit=1)[0] if apply_wildcard else pattern
        objects = [o for page in self._pages(self._bucket(bucket_name), head, delimiter or "",
                                             page_size, max_items, start_after_key)
                   for o in page.get("Contents", ())]
        if apply_wildcard:
            objects = [o for o in objects if fnmatch.fnmatchcase(o["Key"], pattern)]
        if object_filter is not None:
            return list(object_filter(objects, from_datetime, to_datetime))
        return [o["Key"] for o in objects
                if (from_datetime is None or o["LastModified"] > from_datetime)
                and (to_datetime is None or o["LastModified"] < to_datetime)]

    def get_file_metadata(self, prefix: str, bucket_name: str | None = None,
                          page_size: int | None = None,
                          max_items: int | None = None) -> list[dict[str, Any]]:
        """Each object under ``prefix`` as S3 lists it (``Key``, ``Size``, ``LastModified``...)."""
        return [o for page in self._pages(self._bucket(bucket_name), prefix, "", page_size,
                                          max_items) for o in page.get("Contents", ())]

    # -- objects ----------------------------------------------------------------------------------

    def head_object(self, key: str, bucket_name: str | None = None) -> dict[str, Any] | None:
        """The object's metadata, or None when there is no such key."""
        from botocore.exceptions import ClientError

        bucket, key = self._bucket_key(key, bucket_name)
        try:
            return dict(self.get_conn().head_object(Bucket=bucket, Key=key))
        except ClientError as exc:
            if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
                return None
            raise

    def check_for_key(self, key: str, bucket_name: str | None = None) -> bool:
        return self.head_object(key, bucket_name) is not None

    def get_key(self, key: str, bucket_name: str | None = None) -> Any:
        """The boto3 ``s3.Object`` of the key (loaded: missing keys raise)."""
        bucket, key = self._bucket_key(key, bucket_name)
        obj = self.get_resource_type("s3").Object(bucket, key)
        obj.load()
        return obj

    def read_key(self, key: str, bucket_name: str | None = None) -> str:
        bucket, key = self._bucket_key(key, bucket_name)
        body = self.get_conn().get_object(Bucket=bucket, Key=key)["Body"].read()
        return bytes(body).decode("utf-8")

    def check_for_wildcard_key(self, wildcard_key: str, bucket_name: str | None = None,
                               delimiter: str = "") -> bool:
        return self.get_wildcard_key(wildcard_key, bucket_name, delimiter) is not None

    def get_wildcard_key(self, wildcard_key: str, bucket_name: str | None = None,
                         delimiter: str = "") -> Any:
        """The first object whose key matches the shell pattern, or None."""
        bucket, pattern = self._bucket_key(wildcard_key, bucket_name)
        keys = self.list_keys(bucket, pattern, delimiter, apply_wildcard=True)
        return self.get_key(keys[0], bucket) if keys else None

    def _put_args(self, encrypt: bool, acl_policy: str | None) -> dict[str, Any]:
        args = dict(self.extra_args)
        if encrypt:
            args["ServerSideEncryption"] = "AES256"
        if acl_policy:
            args["ACL"] = acl_policy
        return args

    def _refuse_existing(self, bucket: str, key: str, replace: bool) -> None:
        if not replace and self.check_for_key(key, bucket):
            raise ValueError(f"The key {key} already exists.")

    def load_file_obj(self, file_obj: Any, key: str, bucket_name: str | None = None,
                      replace: bool = False, encrypt: bool = False,
                      acl_policy: str | None = None) -> None:
        bucket, key = self._bucket_key(key, bucket_name)
        self._refuse_existing(bucket, key, replace)
        self.get_conn().upload_fileobj(file_obj, bucket, key,
                                       ExtraArgs=self._put_args(encrypt, acl_policy),
                                       Config=self._transfer_config())

    def load_file(self, filename: Path | str, key: str, bucket_name: str | None = None,
                  replace: bool = False, encrypt: bool = False, gzip: bool = False,
                  acl_policy: str | None = None) -> None:
        """Upload a local file (gzip-compressed on the way with ``gzip=True``)."""
        with open(filename, "rb") as handle:
            data = handle.read()
        if gzip:
            data = gz.compress(data)
        self.load_file_obj(io.BytesIO(data), key, bucket_name, replace, encrypt, acl_policy)

    def load_string(self, string_data: str, key: str, bucket_name: str | None = None,
                    replace: bool = False, encrypt: bool = False, encoding: str | None = None,
                    acl_policy: str | None = None, compression: str | None = None) -> None:
        data = string_data.encode(encoding or "utf-8")
        if compression == "gzip":
            data = gz.compress(data)
        elif compression is not None:
            raise NotImplementedError(f"Received {compression} compression type. String can "
                                      "currently be compressed in gzip only.")
        self.load_file_obj(io.BytesIO(data), key, bucket_name, replace, encrypt, acl_policy)

    def load_bytes(self, bytes_data: bytes, key: str, bucket_name: str | None = None,
                   replace: bool = False, encrypt: bool = False,
                   acl_policy: str | None = None) -> None:
        self.load_file_obj(io.BytesIO(bytes_data), key, bucket_name, replace, encrypt,
                           acl_policy)

    def _transfer_config(self) -> Any:
        from boto3.s3.transfer import TransferConfig

        return TransferConfig(**self.transfer_config_args)

    def copy_object(self, source_bucket_key: str, dest_bucket_key: str,
                    source_bucket_name: str | None = None, dest_bucket_name: str | None = None,
                    source_version_id: str | None = None, acl_policy: str | None = None,
                    meta_data_directive: str | None = None, **kwargs: Any) -> Any:
        """Copy an object (the keys may be full URLs when the bucket names are left out)."""
        dest_bucket, dest_key = self.get_s3_bucket_key(dest_bucket_name, dest_bucket_key,
                                                       "dest_bucket_name", "dest_bucket_key")
        src_bucket, src_key = self.get_s3_bucket_key(source_bucket_name, source_bucket_key,
                                                     "source_bucket_name",
                                                     "source_bucket_key")
        source: dict[str, Any] = {"Bucket": src_bucket, "Key": src_key}
        if source_version_id:
            source["VersionId"] = source_version_id
        extra: dict[str, Any] = {"ACL": acl_policy} if acl_policy else {}
        if meta_data_directive:
            extra["MetadataDirective"] = meta_data_directive
        return self.get_conn().copy_object(Bucket=dest_bucket, Key=dest_key,
                                           CopySource=source, **extra, **kwargs)

    def delete_objects(self, bucket: str, keys: str | list[str]) -> None:
        """Delete the keys (1,000 a request); a key that could not be deleted fails."""
        batch = [keys] if isinstance(keys, str) else list(keys)
        for start in range(0, len(batch), 1000):
            chunk = batch[start:start + 1000]
            response = self.get_conn().delete_objects(
                Bucket=bucket, Delete={"Objects": [{"Key": k} for k in chunk]})
            errors = response.get("Errors") or []
            if errors:
                raise StatewrightError(f"Errors when deleting: {[e['Key'] for e in errors]}")

    def download_file(self, key: str, bucket_name: str | None = None,
                      local_path: str | None = None, preserve_file_name: bool = False,
                      use_autogenerated_subdir: bool = True) -> str:
        """Download the object to ``local_path`` (a temporary file name unless
        ``preserve_file_name``); returns the file's path."""
        bucket, key = self._bucket_key(key, bucket_name)
        if self.head_object(key, bucket) is None:
            raise S3KeyNotFound(f"The source file in Bucket {bucket} with path {key} "
                                        "does not exist")
        folder = Path(local_path or tempfile.gettempdir())
        folder.mkdir(parents=True, exist_ok=True)
        if preserve_file_name:
            if use_autogenerated_subdir:
                folder = Path(tempfile.mkdtemp(prefix="airflow_tmp_dir_", dir=folder))
            target = folder / (key.rsplit("/", 1)[-1] or "object")
            if target.exists():
                raise FileExistsError(f"{target} already exists")
        else:
            with tempfile.NamedTemporaryFile(dir=folder, prefix="airflow_tmp_",
                                             delete=False) as handle:
                target = Path(handle.name)
        self.get_conn().download_file(bucket, key, os.fspath(target),
                                      Config=self._transfer_config())
        return os.fspath(target)

    def generate_presigned_url(self, client_method: str, params: dict[str, Any] | None = None,
                               expires_in: int = 3600, http_method: str | None = None) -> str:
        return str(self.get_conn().generate_presigned_url(
            ClientMethod=client_method, Params=params or {}, ExpiresIn=expires_in,
            HttpMethod=http_method))


class S3KeyNotFound(StatewrightError, FileNotFoundError):
    """The key to download does not exist (Airflow's ``AirflowNotFoundException``)."""
