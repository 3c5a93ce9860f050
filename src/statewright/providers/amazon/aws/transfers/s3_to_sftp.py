"""``S3ToSFTPOperator``: copy an S3 object to an SFTP server (Airflow's amazon provider)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.providers.sftp.hooks.sftp import SFTPHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["S3ToSFTPOperator"]


class S3ToSFTPOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("s3_key", "sftp_path", "s3_bucket")

    def __init__(self, *, s3_bucket: str, s3_key: str, sftp_path: str,
                 sftp_conn_id: str = "ssh_default", aws_conn_id: str | None = "aws_default",
                 confirm: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.s3_bucket = s3_bucket
        self.s3_key = s3_key
        self.sftp_path = sftp_path
        self.sftp_conn_id = sftp_conn_id
        self.aws_conn_id = aws_conn_id
        self.confirm = confirm

    @staticmethod
    def get_s3_key(s3_key: str) -> str:
        """The key without a leading ``/`` (a URL's path when given one)."""
        return urlsplit(s3_key).path.lstrip("/")

    def execute(self, context: Any) -> None:
        key = self.get_s3_key(self.s3_key)
        client = S3Hook(aws_conn_id=self.aws_conn_id).get_conn()
        with SFTPHook(ssh_conn_id=self.sftp_conn_id) as sftp, \
                tempfile.NamedTemporaryFile("w+b") as handle:
            client.download_fileobj(self.s3_bucket, key, handle)
            handle.flush()
            sftp.store_file(self.sftp_path, handle.name, confirm=self.confirm)
