"""``GCSToGCSOperator``: copy (or move) objects between buckets or names (Airflow's google
provider).

Each of ``source_objects`` (or ``source_object``) is a prefix: every object under it is copied,
renamed by swapping the prefix's folder for ``destination_object`` when one is given
(``exact_match``: the name itself only). A prefix may hold one ``*`` (the text before it is the
prefix, the text after it must end the name). ``match_glob`` filters the listed objects.
``replace=False`` skips objects already at the destination; ``last_modified_time``,
``maximum_modified_time`` and ``is_older_than`` skip objects by their update time;
``move_object`` deletes each source after its copy. Returns the ``gs://`` URIs written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["WILDCARD", "GCSToGCSOperator"]

WILDCARD = "*"


class GCSToGCSOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("source_bucket", "source_object",
                                                "source_objects", "destination_bucket",
                                                "destination_object", "delimiter",
                                                "impersonation_chain", "match_glob",
                                                "gcp_conn_id")

    def __init__(self, *, source_bucket: str, source_object: str | None = None,
                 source_objects: list[str] | None = None, destination_bucket: str | None = None,
                 destination_object: str | None = None, delimiter: str | None = None,
                 move_object: bool = False, replace: bool = True,
                 gcp_conn_id: str = "google_cloud_default",
                 last_modified_time: datetime | None = None,
                 maximum_modified_time: datetime | None = None, is_older_than: int | None = None,
                 impersonation_chain: str | Sequence[str] | None = None,
                 source_object_required: bool = False, exact_match: bool = False,
                 match_glob: str | None = None, retain_until_time: datetime | None = None,
                 retention_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source_bucket = source_bucket
        self.source_object = source_object
        self.source_objects = source_objects
        self.destination_bucket = destination_bucket
        self.destination_object = destination_object
        self.delimiter = delimiter
        self.move_object = move_object
        self.replace = replace
        self.gcp_conn_id = gcp_conn_id
        self.last_modified_time = last_modified_time
        self.maximum_modified_time = maximum_modified_time
        self.is_older_than = is_older_than
        self.impersonation_chain = impersonation_chain
        self.source_object_required = source_object_required
        self.exact_match = exact_match
        self.match_glob = match_glob
        self.retain_until_time = retain_until_time
        self.retention_mode = retention_mode

    def execute(self, context: Any) -> list[str]:
        hook = GCSHook(gcp_conn_id=self.gcp_conn_id,
                       impersonation_chain=self.impersonation_chain)
        prefixes = self._source_prefixes()
        if self.destination_bucket is None:
            self.log.warning("destination_bucket is None. Defaulting it to source_bucket (%s)",
                             self.source_bucket)
            self.destination_bucket = self.source_bucket
        uris: list[str] = []
        for prefix in prefixes:
            if WILDCARD in prefix:
                uris += self._copy_with_wildcard(hook, prefix)
            else:
                uris += self._copy_without_wildcard(hook, prefix)
        return [u for u in dict.fromkeys(uris) if not u.endswith("/")]

    def _source_prefixes(self) -> list[str]:
        if self.source_objects and self.source_object:
            raise StatewrightError(
                "You can either set source_object parameter or source_objects parameter but not "
                f"both. Found source_object={self.source_object} and "
                f"source_objects={self.source_objects}")
        if not self.source_object and not self.source_objects:
            raise StatewrightError("You must set source_object parameter or source_objects "
                                   "parameter. None set")
        if self.source_objects and not all(isinstance(o, str) for o in self.source_objects):
            raise StatewrightError("At least, one of the `objects` in the `source_objects` is "
                                   "not a string")
        prefixes = [self.source_object] if self.source_object else list(self.source_objects or [])
        if prefixes.count("") > 1:
            raise StatewrightError("You can't have two empty strings inside source_object")
        return [p or "" for p in prefixes]

    def _existing(self, hook: GCSHook, prefix: str, objects: list[str],
                  delimiter: str | None, match_glob: str | None) -> list[str]:
        """``objects`` less those already at the destination (``replace=False``)."""
        assert self.destination_bucket is not None
        if self.destination_object is None:
            existing = hook.list(self.destination_bucket, prefix=prefix, delimiter=delimiter,
                                 match_glob=match_glob)
        else:
            existing = [name.replace(self.destination_object, prefix, 1) for name in
                        hook.list(self.destination_bucket, prefix=self.destination_object,
                                  delimiter=delimiter, match_glob=match_glob)]
        kept = set(existing)
        return [name for name in objects if name not in kept]

    def _copy_without_wildcard(self, hook: GCSHook, prefix: str) -> list[str]:
        objects = hook.list(self.source_bucket, prefix=prefix, delimiter=self.delimiter,
                            match_glob=self.match_glob)
        objects = [o for o in objects if self._matches_exactly(o, prefix)]
        if not self.replace:
            objects = self._existing(hook, prefix, objects, self.delimiter, self.match_glob)
        uris: list[str] = []
        if not objects and prefix:
            if hook.exists(self.source_bucket, prefix):
                target = self.destination_object or prefix
                assert self.destination_bucket is not None
                if self.replace or not hook.exists(self.destination_bucket, target):
                    uris += self._copy_one(hook, prefix, self.destination_object)
            elif self.source_object_required:
                raise StatewrightError(f"{prefix} does not exist in bucket "
                                       f"{self.source_bucket}")
        if len(objects) == 1 and not objects[0].endswith("/"):
            target = self.destination_object or objects[0]
            if self.destination_object and self.destination_object.endswith("/"):
                target += objects[0].split("/")[-1]
            uris += self._copy_one(hook, objects[0], target)
        elif objects:
            uris += self._copy_many(hook, objects, prefix)
        return uris

    def _copy_many(self, hook: GCSHook, objects: list[str], prefix: str) -> list[str]:
        bare = prefix.rstrip("/")
        if prefix.endswith("/") or all(o.replace(bare, "", 1).startswith("/") for o in objects):
            base = bare + "/"
        else:
            base = prefix[:prefix.rfind("/") + 1] if "/" in prefix else ""
        uris: list[str] = []
        for name in objects:
            if self.destination_object is None:
                target = name
            else:
                target = self.destination_object.rstrip("/") + "/" + name.replace(base, "", 1)
            uris += self._copy_one(hook, name, target)
        return uris

    def _matches_exactly(self, name: str, prefix: str) -> bool:
        return not self.exact_match or name == prefix

    def _copy_with_wildcard(self, hook: GCSHook, prefix: str) -> list[str]:
        if prefix.count(WILDCARD) > 1:
            raise StatewrightError("Only one wildcard '*' is allowed in source_object "
                                   f"parameter. Found {prefix.count(WILDCARD)} in {prefix}.")
        head, tail = prefix.split(WILDCARD, 1)
        objects = hook.list(self.source_bucket, prefix=head, delimiter=tail)
        if not self.replace:
            objects = self._existing(hook, head, objects, tail, None)
        uris: list[str] = []
        for name in objects:
            target = (name if self.destination_object is None
                      else name.replace(head, self.destination_object, 1))
            uris += self._copy_one(hook, name, target)
        return uris

    def _wanted(self, hook: GCSHook, name: str) -> bool:
        """Whether the object's update time lets it be copied."""
        bucket = self.source_bucket
        if self.is_older_than:
            return hook.is_older_than(bucket, name, self.is_older_than)
        if self.last_modified_time and self.maximum_modified_time:
            return hook.is_updated_between(bucket, name, self.last_modified_time,
                                           self.maximum_modified_time)
        if self.last_modified_time is not None:
            return hook.is_updated_after(bucket, name, self.last_modified_time)
        if self.maximum_modified_time is not None:
            return hook.is_updated_before(bucket, name, self.maximum_modified_time)
        return True

    def _copy_one(self, hook: GCSHook, name: str, target: str | None) -> list[str]:
        from google.cloud.exceptions import NotFound

        if not self._wanted(hook, name):
            self.log.info("Skipped %s: its update time is outside the bounds given", name)
            return []
        target = target or name
        assert self.destination_bucket is not None
        self.log.info("Executing copy of gs://%s/%s to gs://%s/%s", self.source_bucket, name,
                      self.destination_bucket, target)
        retention: dict[str, Any] = {}
        if self.retain_until_time is not None:
            retention = {"retain_until_time": self.retain_until_time,
                         "retention_mode": self.retention_mode}
        hook.rewrite(self.source_bucket, name, self.destination_bucket, target, **retention)
        if self.move_object:
            try:
                hook.delete(self.source_bucket, name)
            except NotFound:
                self.log.warning("Object %s does not exist in the source bucket %s", name,
                                 self.source_bucket)
        return [f"gs://{self.destination_bucket}/{target}"]
