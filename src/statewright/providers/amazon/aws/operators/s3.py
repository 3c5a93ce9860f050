"""The S3 operators of Airflow's amazon provider: create and delete buckets, create, copy,
list and delete objects. Each takes ``aws_conn_id`` (``aws_default``)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.sdk.baseoperator import BaseOperator

__all__ = [
    "S3CopyObjectOperator",
    "S3CreateBucketOperator",
    "S3CreateObjectOperator",
    "S3DeleteBucketOperator",
    "S3DeleteObjectsOperator",
    "S3ListOperator",
    "S3ListPrefixesOperator",
]


class _S3Operator(BaseOperator):
    def __init__(self, *, aws_conn_id: str | None = "aws_default",
                 verify: bool | str | None = None, region_name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.aws_conn_id = aws_conn_id
        self.verify = verify
        self.region_name = region_name

    @functools.cached_property
    def hook(self) -> S3Hook:
        return S3Hook(aws_conn_id=self.aws_conn_id, verify=self.verify,
                      region_name=self.region_name)


class S3CreateBucketOperator(_S3Operator):
    template_fields: ClassVar[Sequence[str]] = ("bucket_name",)

    def __init__(self, *, bucket_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket_name = bucket_name

    def execute(self, context: Any) -> None:
        hook = self.hook
        if hook.check_for_bucket(self.bucket_name):
            self.log.warning("Bucket with name: %s already exists", self.bucket_name)
            return
        hook.create_bucket(bucket_name=self.bucket_name, region_name=self.region_name)
        self.log.info("Created bucket with name: %s", self.bucket_name)


class S3DeleteBucketOperator(_S3Operator):
    template_fields: ClassVar[Sequence[str]] = ("bucket_name",)

    def __init__(self, *, bucket_name: str, force_delete: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket_name = bucket_name
        self.force_delete = force_delete

    def execute(self, context: Any) -> None:
        hook = self.hook
        if not hook.check_for_bucket(self.bucket_name):
            self.log.info("Bucket with name: %s doesn't exist", self.bucket_name)
            return
        hook.delete_bucket(bucket_name=self.bucket_name, force_delete=self.force_delete)
        self.log.info("Deleted bucket with name: %s", self.bucket_name)


class S3CreateObjectOperator(_S3Operator):
    template_fields: ClassVar[Sequence[str]] = ("s3_bucket", "s3_key", "data")

    def __init__(self, *, s3_key: str, data: str | bytes, s3_bucket: str | None = None,
                 replace: bool = False, encrypt: bool = False, acl_policy: str | None = None,
                 encoding: str | None = None, compression: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.s3_bucket = s3_bucket
        self.s3_key = s3_key
        self.data = data
        self.replace = replace
        self.encrypt = encrypt
        self.acl_policy = acl_policy
        self.encoding = encoding
        self.compression = compression

    def execute(self, context: Any) -> None:
        bucket, key = S3Hook.get_s3_bucket_key(self.s3_bucket, self.s3_key, "s3_bucket",
                                               "s3_key")
        if isinstance(self.data, str):
            self.hook.load_string(self.data, key, bucket, self.replace, self.encrypt,
                                  self.encoding, self.acl_policy, self.compression)
        else:
            self.hook.load_bytes(self.data, key, bucket, self.replace, self.encrypt,
                                 self.acl_policy)


class S3DeleteObjectsOperator(_S3Operator):
    template_fields: ClassVar[Sequence[str]] = ("keys", "bucket", "prefix", "from_datetime",
                                                "to_datetime")

    def __init__(self, *, bucket: str, keys: str | list[str] | None = None,
                 prefix: str | None = None, from_datetime: datetime | str | None = None,
                 to_datetime: datetime | str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket = bucket
        self.keys = keys
        self.prefix = prefix
        self.from_datetime = from_datetime
        self.to_datetime = to_datetime
        if keys is not None and (prefix, from_datetime, to_datetime) != (None, None, None):
            raise ValueError(f"S3DeleteObjectsOperator {self.task_id!r}: give keys or a "
                             "prefix/from_datetime/to_datetime, not both")
        if keys is None and (prefix, from_datetime, to_datetime) == (None, None, None):
            raise ValueError(f"S3DeleteObjectsOperator {self.task_id!r}: either keys or at "
                             "least one of prefix, from_datetime, to_datetime should be set")

    def execute(self, context: Any) -> None:
        hook = self.hook
        keys = self.keys
        if keys is None:
            keys = hook.list_keys(bucket_name=self.bucket, prefix=self.prefix,
                                  from_datetime=_when(self.from_datetime),
                                  to_datetime=_when(self.to_datetime))
        if keys:
            hook.delete_objects(bucket=self.bucket, keys=keys)


class S3CopyObjectOperator(_S3Operator):
    template_fields: ClassVar[Sequence[str]] = ("source_bucket_key", "dest_bucket_key",
                                                "source_bucket_name", "dest_bucket_name")

    def __init__(self, *, source_bucket_key: str, dest_bucket_key: str,
                 source_bucket_name: str | None = None, dest_bucket_name: str | None = None,
                 source_version_id: str | None = None, acl_policy: str | None = None,
                 meta_data_directive: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source_bucket_key = source_bucket_key
        self.dest_bucket_key = dest_bucket_key
        self.source_bucket_name = source_bucket_name
        self.dest_bucket_name = dest_bucket_name
        self.source_version_id = source_version_id
        self.acl_policy = acl_policy
        self.meta_data_directive = meta_data_directive

    def execute(self, context: Any) -> None:
        self.hook.copy_object(self.source_bucket_key, self.dest_bucket_key,
                              self.source_bucket_name, self.dest_bucket_name,
                              self.source_version_id, self.acl_policy,
                              self.meta_data_directive)


class S3ListOperator(_S3Operator):
    """Returns the keys under ``prefix`` (a shell pattern with ``apply_wildcard``)."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "prefix", "delimiter")

    def __init__(self, *, bucket: str, prefix: str = "", delimiter: str = "",
                 apply_wildcard: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter
        self.apply_wildcard = apply_wildcard

    def execute(self, context: Any) -> list[str]:
        self.log.info("Getting the list of files from bucket: %s in prefix: %s (Delimiter %s)",
                      self.bucket, self.prefix, self.delimiter)
        return self.hook.list_keys(bucket_name=self.bucket, prefix=self.prefix,
                                   delimiter=self.delimiter, apply_wildcard=self.apply_wildcard)


class S3ListPrefixesOperator(_S3Operator):
    """Returns the common prefixes under ``prefix`` up to ``delimiter``."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "prefix", "delimiter")

    def __init__(self, *, bucket: str, prefix: str, delimiter: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter

    def execute(self, context: Any) -> list[str]:
        return self.hook.list_prefixes(bucket_name=self.bucket, prefix=self.prefix,
                                       delimiter=self.delimiter)


def _when(value: datetime | str | None) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else value
