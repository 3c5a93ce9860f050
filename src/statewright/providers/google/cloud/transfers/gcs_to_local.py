"""``GCSToLocalFilesystemOperator``: download an object to a local file, or push its text to
XCom under ``store_to_xcom_key`` (Airflow's google provider)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["MAX_XCOM_SIZE", "GCSToLocalFilesystemOperator"]

MAX_XCOM_SIZE = 49344
"""The largest object (bytes) pushed to XCom, Airflow's limit."""


class GCSToLocalFilesystemOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("bucket", "object_name", "filename",
                                                "store_to_xcom_key", "impersonation_chain",
                                                "file_encoding", "gcp_conn_id")

    def __init__(self, *, bucket: str, object_name: str, filename: str | None = None,
                 store_to_xcom_key: str | None = None,
                 gcp_conn_id: str = "google_cloud_default",
                 impersonation_chain: str | Sequence[str] | None = None,
                 file_encoding: str = "utf-8", **kwargs: Any) -> None:
        if filename is not None and store_to_xcom_key is not None:
            raise ValueError("Either filename or store_to_xcom_key can be set")
        super().__init__(**kwargs)
        self.bucket = bucket
        self.object_name = object_name
        self.filename = filename
        self.store_to_xcom_key = store_to_xcom_key
        self.gcp_conn_id = gcp_conn_id
        self.impersonation_chain = impersonation_chain
        self.file_encoding = file_encoding

    def execute(self, context: Any) -> None:
        self.log.info("Executing download: %s, %s, %s", self.bucket, self.object_name,
                      self.filename)
        hook = GCSHook(gcp_conn_id=self.gcp_conn_id,
                       impersonation_chain=self.impersonation_chain)
        if not self.store_to_xcom_key:
            hook.download(bucket_name=self.bucket, object_name=self.object_name,
                          filename=self.filename)
            return
        if hook.get_size(bucket_name=self.bucket, object_name=self.object_name) >= MAX_XCOM_SIZE:
            raise StatewrightError("The size of the downloaded file is too large to push to "
                                   "XCom!")
        data = hook.download(bucket_name=self.bucket, object_name=self.object_name)
        context["ti"].xcom_push(key=self.store_to_xcom_key,
                                value=str(data, self.file_encoding))
