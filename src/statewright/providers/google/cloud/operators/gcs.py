"""The Cloud Storage operators of Airflow's google provider: create and delete buckets, list
and delete objects, transform an object with a local script. Each takes ``gcp_conn_id``
(``google_cloud_default``) and ``impersonation_chain``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from tempfile import NamedTemporaryFile
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.providers.google.cloud.operators.cloud_base import GoogleCloudBaseOperator
from statewright.providers.google.common.hooks.base_google import PROVIDE_PROJECT_ID

__all__ = [
    "GCSCreateBucketOperator",
    "GCSDeleteBucketOperator",
    "GCSDeleteObjectsOperator",
    "GCSFileTransformOperator",
    "GCSListObjectsOperator",
]


class _GCSOperator(GoogleCloudBaseOperator):
    def __init__(self, *, gcp_conn_id: str = "google_cloud_default",
                 impersonation_chain: str | Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gcp_conn_id = gcp_conn_id
        self.impersonation_chain = impersonation_chain

    def make_hook(self) -> GCSHook:
        return GCSHook(gcp_conn_id=self.gcp_conn_id,
                       impersonation_chain=self.impersonation_chain)


class GCSCreateBucketOperator(_GCSOperator):
    """Create a bucket; one that exists already is a warning, not a failure."""

    template_fields: ClassVar[Sequence[str]] = ("bucket_name", "storage_class", "location",
                                                "project_id", "gcp_conn_id",
                                                "impersonation_chain")

    def __init__(self, *, bucket_name: str, resource: dict[str, Any] | None = None,
                 storage_class: str = "MULTI_REGIONAL", location: str = "US",
                 project_id: str = PROVIDE_PROJECT_ID, labels: dict[str, str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket_name = bucket_name
        self.resource = resource
        self.storage_class = storage_class
        self.location = location
        self.project_id = project_id
        self.labels = labels

    def execute(self, context: Any) -> None:
        from google.cloud.exceptions import Conflict

        try:
            self.make_hook().create_bucket(
                bucket_name=self.bucket_name, resource=self.resource,
                storage_class=self.storage_class, location=self.location,
                project_id=self.project_id, labels=self.labels)
        except Conflict:  # HTTP 409
            self.log.warning("Bucket %s already exists", self.bucket_name)


class GCSListObjectsOperator(_GCSOperator):
    """List the objects of a bucket (under ``prefix``, matching ``match_glob``); returns the
    names (pushed to XCom)."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "prefix", "delimiter", "match_glob",
                                                "gcp_conn_id", "impersonation_chain")

    def __init__(self, *, bucket: str, prefix: str | list[str] | None = None,
                 delimiter: str | None = None, match_glob: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter
        self.match_glob = match_glob

    def execute(self, context: Any) -> list[str]:
        self.log.info("Getting list of the files. Bucket: %s; Prefix(es): %s; MatchGlob: %s; "
                      "Delimiter: %s", self.bucket, self.prefix, self.match_glob,
                      self.delimiter)
        return self.make_hook().list(bucket_name=self.bucket, prefix=self.prefix,
                                     delimiter=self.delimiter, match_glob=self.match_glob)


class GCSDeleteObjectsOperator(_GCSOperator):
    """Delete the listed ``objects``, or every object under ``prefix`` (one of the two)."""

    template_fields: ClassVar[Sequence[str]] = ("bucket_name", "prefix", "objects",
                                                "gcp_conn_id", "impersonation_chain")

    def __init__(self, *, bucket_name: str, objects: list[str] | None = None,
                 prefix: str | list[str] | None = None, ignore_error: bool = False,
                 **kwargs: Any) -> None:
        task_id = kwargs.get("task_id")
        if objects is None and prefix is None:
            raise ValueError(f"(Task {task_id}) Either objects or prefix should be set. "
                             "Both are None.")
        if objects is not None and prefix is not None:
            raise ValueError(f"(Task {task_id}) Objects or prefix should be set. "
                             "Both provided.")
        super().__init__(**kwargs)
        self.bucket_name = bucket_name
        self.objects = objects
        self.prefix = prefix
        self.ignore_error = ignore_error

    def execute(self, context: Any) -> None:
        hook = self.make_hook()
        objects = (self.objects if self.objects is not None
                   else hook.list(bucket_name=self.bucket_name, prefix=self.prefix))
        self.log.info("Deleting %s objects from %s", len(objects), self.bucket_name)
        for name in objects:
            hook.delete(bucket_name=self.bucket_name, object_name=name,
                        ignore_error=self.ignore_error)


class GCSDeleteBucketOperator(_GCSOperator):
    """Delete a bucket, with its objects unless ``force=False``."""

    template_fields: ClassVar[Sequence[str]] = ("bucket_name", "gcp_conn_id",
                                                "impersonation_chain", "user_project")

    def __init__(self, *, bucket_name: str, force: bool = True,
                 user_project: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket_name = bucket_name
        self.force = force
        self.user_project = user_project

    def execute(self, context: Any) -> None:
        self.make_hook().delete_bucket(bucket_name=self.bucket_name, force=self.force,
                                       user_project=self.user_project)


class GCSFileTransformOperator(_GCSOperator):
    """Download an object, run ``transform_script source destination`` on local copies, and
    upload the result (to the source object unless a destination is given)."""

    template_fields: ClassVar[Sequence[str]] = ("source_bucket", "source_object",
                                                "destination_bucket", "destination_object",
                                                "transform_script", "gcp_conn_id",
                                                "impersonation_chain")

    def __init__(self, *, source_bucket: str, source_object: str,
                 transform_script: str | list[str], destination_bucket: str | None = None,
                 destination_object: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source_bucket = source_bucket
        self.source_object = source_object
        self.destination_bucket = destination_bucket
        self.destination_object = destination_object
        self.transform_script = transform_script
        self.output_encoding = sys.getdefaultencoding()

    def execute(self, context: Any) -> None:
        self.destination_bucket = self.destination_bucket or self.source_bucket
        self.destination_object = self.destination_object or self.source_object
        hook = self.make_hook()
        with NamedTemporaryFile() as source, NamedTemporaryFile() as destination:
            hook.download(bucket_name=self.source_bucket, object_name=self.source_object,
                          filename=source.name)
            script = self.transform_script
            cmd = [script] if isinstance(script, str) else list(script)
            self._run([*cmd, source.name, destination.name])
            self.log.info("Uploading file to %s as %s", self.destination_bucket,
                          self.destination_object)
            hook.upload(bucket_name=self.destination_bucket,
                        object_name=self.destination_object, filename=destination.name)

    def _run(self, cmd: list[str]) -> None:
        self.log.info("Starting the transformation")
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              close_fds=True) as process:
            assert process.stdout is not None
            for line in iter(process.stdout.readline, b""):
                self.log.info(line.decode(self.output_encoding).rstrip())
            process.wait()
        if process.returncode:
            raise StatewrightError(f"Transform script failed: {process.returncode}")
        self.log.info("Transformation succeeded.")
