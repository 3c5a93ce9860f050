"""``S3KeySensor``: wait for one or more keys in S3 (Airflow's amazon provider).

``bucket_key`` is a key, a full ``s3://`` URL (without ``bucket_name``) or a list of them; all
must exist. With ``wildcard_match`` each is a shell pattern (``data/*.csv``); with
``use_regex`` a regular expression. ``check_fn`` receives the matched objects' metadata
(``[{"Key": ..., "Size": ...}]``, plus ``metadata_keys`` asked for) and decides.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.sdk.sensors.base import BaseSensor

__all__ = ["S3KeySensor"]


class S3KeySensor(BaseSensor):
    template_fields: ClassVar[Sequence[str]] = ("bucket_key", "bucket_name")

    def __init__(self, *, bucket_key: str | list[str], bucket_name: str | None = None,
                 wildcard_match: bool = False, check_fn: Callable[..., bool] | None = None,
                 aws_conn_id: str | None = "aws_default", verify: bool | str | None = None,
                 deferrable: bool = False, use_regex: bool = False,
                 metadata_keys: list[str] | None = None, region_name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bucket_key = bucket_key
        self.bucket_name = bucket_name
        self.wildcard_match = wildcard_match
        self.check_fn = check_fn
        self.aws_conn_id = aws_conn_id
        self.verify = verify
        self.use_regex = use_regex
        self.metadata_keys = list(metadata_keys or ["Size", "Key"])
        self.region_name = region_name

    @functools.cached_property
    def hook(self) -> S3Hook:
        return S3Hook(aws_conn_id=self.aws_conn_id, verify=self.verify,
                      region_name=self.region_name)

    def poke(self, context: Any) -> bool:
        hook = self.hook
        keys = [self.bucket_key] if isinstance(self.bucket_key, str) else self.bucket_key
        found: list[dict[str, Any]] = []
        for key in keys:
            files = self._matches(hook, key)
            if not files:
                return False
            found += files
        if self.check_fn is None:
            return True
        if len(inspect.signature(self.check_fn).parameters) > 1:
            return bool(self.check_fn(found, **_context_kwargs(self.check_fn, context)))
        return bool(self.check_fn(found))

    def _matches(self, hook: S3Hook, key: str) -> list[dict[str, Any]]:
        bucket, key = S3Hook.get_s3_bucket_key(self.bucket_name, key, "bucket_name",
                                               "bucket_key")
        self.log.info("Poking for key : s3://%s/%s", bucket, key)
        if self.wildcard_match or self.use_regex:
            prefix = re.split(r"[\[*?]", key, maxsplit=1)[0] if self.wildcard_match else ""
            objects = hook.get_file_metadata(prefix, bucket)
            if self.wildcard_match:
                objects = [o for o in objects if fnmatch.fnmatch(o["Key"], key)]
            else:
                objects = [o for o in objects if re.match(key, o["Key"])]
            return [{k: o.get(k) for k in self.metadata_keys} for o in objects]
        head = hook.head_object(key, bucket)
        if head is None:
            return []
        head.setdefault("Size", head.get("ContentLength"))
        head.setdefault("Key", key)
        return [{k: head.get(k) for k in self.metadata_keys}]


def _context_kwargs(fn: Callable[..., Any], context: Any) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(context)
    return {name: context[name] for name in list(params)[1:] if name in context}
