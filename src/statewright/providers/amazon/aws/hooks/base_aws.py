"""``AwsBaseHook`` / ``AwsGenericHook``: a boto3 client from an ``aws`` connection (Airflow's
amazon provider).

The connection (type ``aws``, or the older ``s3``) has the access key id and the secret access
key as ``login`` and ``password`` (older connections: ``aws_access_key_id`` and
``aws_secret_access_key`` in the extra). Its extra may give ``region_name``, ``endpoint_url``
(an S3-compatible server: MinIO, moto, Ceph...; ``host`` in older connections),
``aws_session_token``, ``verify``, ``config_kwargs`` (botocore ``Config``) and
``service_config`` (per service: ``{"s3": {"endpoint_url": ..., "bucket_name": ...}}``).
With no connection (``aws_conn_id=None``, or an id that does not exist) boto3's own chain is
used: the environment, ``~/.aws``, the instance's role.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from statewright.sdk.basehook import BaseHook
from statewright.sdk.secrets import ConnectionNotFound

__all__ = ["AwsBaseHook", "AwsGenericHook"]

log = logging.getLogger("statewright.task.hooks.aws")


class AwsGenericHook(BaseHook):
    conn_name_attr: ClassVar[str] = "aws_conn_id"
    default_conn_name: ClassVar[str] = "aws_default"
    conn_type: ClassVar[str] = "aws"
    conn_types: ClassVar[tuple[str, ...]] = ("aws", "s3")
    hook_name: ClassVar[str] = "Amazon Web Services"

    def __init__(self, aws_conn_id: str | None = "aws_default", verify: bool | str | None = None,
                 region_name: str | None = None, client_type: str | None = None,
                 resource_type: str | None = None, config: Any = None) -> None:
        super().__init__()
        self.aws_conn_id = aws_conn_id
        self.verify = verify
        self._region_name = region_name
        self.client_type = client_type
        self.resource_type = resource_type
        self.config = config
        self._extra: dict[str, Any] | None = None
        self._credentials: dict[str, str | None] = {}
        self._client: Any = None
        self._sessions: dict[str | None, Any] = {}

    # -- the connection -------------------------------------------------------------------------

    def _read_connection(self) -> dict[str, Any]:
        if self._extra is not None:
            return self._extra
        self._extra = {}
        if self.aws_conn_id:
            try:
                conn = self.get_connection(self.aws_conn_id)
            except ConnectionNotFound:
                log.warning("Unable to find AWS Connection ID %r, using boto3's default "
                            "credentials", self.aws_conn_id)
            else:
                self._extra = dict(conn.extra_dejson)
                # older connections (MinIO tutorials, the s3 type) keep the keys in the extra
                self._credentials = {
                    "aws_access_key_id": conn.login or self._extra.get("aws_access_key_id"),
                    "aws_secret_access_key": conn.password
                    or self._extra.get("aws_secret_access_key")}
        self._credentials["aws_session_token"] = self._extra.get("aws_session_token")
        return self._extra

    @property
    def conn_config(self) -> dict[str, Any]:
        """The connection's extra (empty without a connection)."""
        return self._read_connection()

    @property
    def region_name(self) -> str | None:
        return self._region_name or self._read_connection().get("region_name")

    def service_config(self, service: str) -> dict[str, Any]:
        config = self._read_connection().get("service_config") or {}
        return dict(config.get(service) or {})

    def endpoint_url(self, service: str) -> str | None:
        extra = self._read_connection()
        return (self.service_config(service).get("endpoint_url") or extra.get("endpoint_url")
                or extra.get("host"))

    def get_session(self, region_name: str | None = None) -> Any:
        """The boto3 session of the connection's credentials (one per region and hook)."""
        import boto3

        self._read_connection()
        region = region_name or self.region_name
        if region not in self._sessions:
            credentials = {k: v for k, v in self._credentials.items() if v}
            self._sessions[region] = boto3.session.Session(
                region_name=region, botocore_session=_botocore_session(), **credentials)
        return self._sessions[region]

    def _botocore_config(self) -> Any:
        if self.config is not None:
            return self.config
        kwargs = self._read_connection().get("config_kwargs")
        if not kwargs:
            return None
        from botocore.config import Config

        return Config(**kwargs)

    def _verify(self) -> bool | str | None:
        return self.verify if self.verify is not None else self._read_connection().get("verify")

    def get_client_type(self, client_type: str | None = None,
                        region_name: str | None = None) -> Any:
        service = client_type or self.client_type
        if not service:
            raise ValueError(f"{type(self).__name__}: no client_type")
        return self.get_session(region_name).client(
            service, endpoint_url=self.endpoint_url(service), config=self._botocore_config(),
            verify=self._verify())

    def get_resource_type(self, resource_type: str | None = None,
                          region_name: str | None = None) -> Any:
        service = resource_type or self.resource_type or self.client_type
        if not service:
            raise ValueError(f"{type(self).__name__}: no resource_type")
        return self.get_session(region_name).resource(
            service, endpoint_url=self.endpoint_url(service), config=self._botocore_config(),
            verify=self._verify())

    @property
    def conn(self) -> Any:
        """The boto3 client (or resource), made once."""
        if self._client is None:
            self._client = (self.get_client_type() if self.client_type
                            else self.get_resource_type())
        return self._client

    def get_conn(self) -> Any:
        return self.conn

    def test_connection(self) -> tuple[bool, str]:
        try:
            self.get_session().client(
                "sts", endpoint_url=self.endpoint_url("sts")).get_caller_identity()
            return True, "Connection successfully tested"
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"


AwsBaseHook = AwsGenericHook

_SHARED_LOADER: dict[str, Any] = {}


def _botocore_session() -> Any:
    """A new botocore session that shares the process's loader of service models (parsing
    them takes a few tenths of a second per session; a task making several hooks pays once)."""
    import botocore.session

    session = botocore.session.get_session()
    loader = _SHARED_LOADER.setdefault("loader", session.get_component("data_loader"))
    session.register_component("data_loader", loader)
    return session
