"""``LocalFilesystemToS3Operator``: upload a local file to S3 (Airflow's amazon provider)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["LocalFilesystemToS3Operator"]


class LocalFilesystemToS3Operator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("filename", "dest_key", "dest_bucket")

    def __init__(self, *, filename: str, dest_key: str, dest_bucket: str | None = None,
                 aws_conn_id: str | None = "aws_default", verify: str | bool | None = None,
                 replace: bool = False, encrypt: bool = False, gzip: bool = False,
                 acl_policy: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.filename = filename
        self.dest_key = dest_key
        self.dest_bucket = dest_bucket
        self.aws_conn_id = aws_conn_id
        self.verify = verify
        self.replace = replace
        self.encrypt = encrypt
        self.gzip = gzip
        self.acl_policy = acl_policy

    def execute(self, context: Any) -> None:
        hook = S3Hook(aws_conn_id=self.aws_conn_id, verify=self.verify)
        bucket, key = S3Hook.get_s3_bucket_key(self.dest_bucket, self.dest_key, "dest_bucket",
                                               "dest_key")
        hook.load_file(self.filename, key, bucket, self.replace, self.encrypt, self.gzip,
                       self.acl_policy)
