"""``LocalFilesystemToGCSOperator``: upload local files to Cloud Storage (Airflow's google
provider). ``src`` is a path, a glob pattern or a list of paths; ``dst`` an object name, or a
"directory" ending with ``/`` under which each file keeps its base name. Returns the
``gs://`` URIs written."""

from __future__ import annotations

import os
from collections.abc import Sequence
from glob import glob
from typing import Any, ClassVar

from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["LocalFilesystemToGCSOperator"]


class LocalFilesystemToGCSOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("src", "dst", "bucket", "impersonation_chain",
                                                "gcp_conn_id")

    def __init__(self, *, src: str | list[str], dst: str, bucket: str,
                 gcp_conn_id: str = "google_cloud_default",
                 mime_type: str = "application/octet-stream", gzip: bool = False,
                 chunk_size: int | None = None,
                 impersonation_chain: str | Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.src = src
        self.dst = dst
        self.bucket = bucket
        self.gcp_conn_id = gcp_conn_id
        self.mime_type = mime_type
        self.gzip = gzip
        self.chunk_size = chunk_size
        self.impersonation_chain = impersonation_chain

    def execute(self, context: Any) -> list[str]:
        hook = GCSHook(gcp_conn_id=self.gcp_conn_id,
                       impersonation_chain=self.impersonation_chain)
        paths = self.src if isinstance(self.src, list) else sorted(glob(self.src))
        if not paths:
            raise FileNotFoundError(self.src)
        if os.path.basename(self.dst):  # an object name
            if len(paths) > 1:
                raise ValueError("'dst' parameter references filepath. Please specify directory "
                                 "(with trailing backslash) to upload multiple files. e.g. "
                                 "/path/to/directory/")
            names = [self.dst]
        else:
            names = [os.path.join(self.dst, os.path.basename(p)) for p in paths]
        uris: list[str] = []
        for path, name in zip(paths, names, strict=True):
            hook.upload(bucket_name=self.bucket, object_name=name, mime_type=self.mime_type,
                        filename=path, gzip=self.gzip, chunk_size=self.chunk_size)
            uris.append(f"gs://{self.bucket}/{name}")
        return list(dict.fromkeys(uris))
