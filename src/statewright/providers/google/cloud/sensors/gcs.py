"""The Cloud Storage sensors of Airflow's google provider: an object exists (or objects match
a glob), objects exist under a prefix (their names are the sensor's XCom value), an object was
updated after a time (``ts_func(context)``, by default the data interval's end).

``deferrable=True`` is accepted and the sensor waits in poke mode (these sensors have no trigger
yet), as the S3 sensor does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, ClassVar

from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.sdk.sensors.base import BaseSensor

__all__ = [
    "GCSObjectExistenceSensor",
    "GCSObjectUpdateSensor",
    "GCSObjectsWithPrefixExistenceSensor",
    "ts_function",
]


def ts_function(context: Any) -> datetime:
    """The default time of ``GCSObjectUpdateSensor``: the data interval's end."""
    end: datetime = context["data_interval_end"]
    return end


class _GCSSensor(BaseSensor):
    def __init__(self, *, bucket: str, google_cloud_conn_id: str = "google_cloud_default",
                 impersonation_chain: str | Sequence[str] | None = None,
                 deferrable: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # deferrable: waits in poke mode (no trigger yet)
        self.bucket = bucket
        self.google_cloud_conn_id = google_cloud_conn_id
        self.impersonation_chain = impersonation_chain

    def make_hook(self) -> GCSHook:
        return GCSHook(gcp_conn_id=self.google_cloud_conn_id,
                       impersonation_chain=self.impersonation_chain)


class GCSObjectExistenceSensor(_GCSSensor):
    """Wait for ``object`` in ``bucket`` (with ``use_glob``: for any object matching it)."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "object", "impersonation_chain",
                                                "google_cloud_conn_id")

    def __init__(self, *, bucket: str, object: str, use_glob: bool = False,
                 retry: Any = None, **kwargs: Any) -> None:
        super().__init__(bucket=bucket, **kwargs)
        self.object = object
        self.use_glob = use_glob
        self.retry = retry

    def poke(self, context: Any) -> bool:
        self.log.info("Sensor checks existence of : %s, %s", self.bucket, self.object)
        hook = self.make_hook()
        if self.use_glob:
            return bool(hook.list(self.bucket, match_glob=self.object))
        return hook.exists(self.bucket, self.object, self.retry)

    def execute(self, context: Any) -> Any:
        super().execute(context)
        return True


class GCSObjectsWithPrefixExistenceSensor(_GCSSensor):
    """Wait for objects under ``prefix``; returns their names (pushed to XCom)."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "prefix", "impersonation_chain",
                                                "google_cloud_conn_id")

    def __init__(self, *, bucket: str, prefix: str, **kwargs: Any) -> None:
        super().__init__(bucket=bucket, **kwargs)
        self.prefix = prefix
        self._matches: list[str] = []

    def poke(self, context: Any) -> bool:
        self.log.info("Checking for existence of object: %s, %s", self.bucket, self.prefix)
        self._matches = self.make_hook().list(self.bucket, prefix=self.prefix)
        return bool(self._matches)

    def execute(self, context: Any) -> Any:
        super().execute(context)
        return self._matches


class GCSObjectUpdateSensor(_GCSSensor):
    """Wait until ``object`` was updated after ``ts_func(context)``."""

    template_fields: ClassVar[Sequence[str]] = ("bucket", "object", "impersonation_chain",
                                                "google_cloud_conn_id")

    def __init__(self, *, bucket: str, object: str,
                 ts_func: Callable[[Any], datetime] = ts_function, **kwargs: Any) -> None:
        super().__init__(bucket=bucket, **kwargs)
        self.object = object
        self.ts_func = ts_func

    def poke(self, context: Any) -> bool:
        self.log.info("Sensor checks existence of : %s, %s", self.bucket, self.object)
        return self.make_hook().is_updated_after(self.bucket, self.object,
                                                 self.ts_func(context))
