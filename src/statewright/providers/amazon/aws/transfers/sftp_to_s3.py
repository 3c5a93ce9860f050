"""``SFTPToS3Operator``: copy a file from an SFTP server to S3 (Airflow's amazon provider)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.providers.sftp.hooks.sftp import SFTPHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["SFTPToS3Operator"]


class SFTPToS3Operator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("s3_key", "sftp_path", "s3_bucket")

    def __init__(self, *, s3_bucket: str, s3_key: str, sftp_path: str,
                 sftp_conn_id: str = "ssh_default", aws_conn_id: str | None = "aws_default",
                 use_temp_file: bool = True, fail_on_file_not_exist: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.s3_bucket = s3_bucket
        self.s3_key = s3_key
        self.sftp_path = sftp_path
        self.sftp_conn_id = sftp_conn_id
        self.aws_conn_id = aws_conn_id
        self.use_temp_file = use_temp_file
        self.fail_on_file_not_exist = fail_on_file_not_exist

    @staticmethod
    def get_s3_key(s3_key: str) -> str:
        """The key without a leading ``/`` (a URL's path when given one)."""
        return urlsplit(s3_key).path.lstrip("/")

    def execute(self, context: Any) -> None:
        key = self.get_s3_key(self.s3_key)
        s3 = S3Hook(aws_conn_id=self.aws_conn_id)
        with SFTPHook(ssh_conn_id=self.sftp_conn_id) as sftp:
            if not sftp.path_exists(self.sftp_path):
                if self.fail_on_file_not_exist:
                    raise FileNotFoundError(f"File {self.sftp_path} not found on the SFTP "
                                            "server")
                self.log.info("File %s not found on the SFTP server; nothing to copy",
                              self.sftp_path)
                return
            with tempfile.NamedTemporaryFile("w+b") as handle:
                sftp.retrieve_file(self.sftp_path, handle)
                handle.flush()
                handle.seek(0)
                s3.load_file_obj(handle, key, self.s3_bucket, replace=True)
