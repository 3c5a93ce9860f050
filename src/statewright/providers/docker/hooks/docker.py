"""``DockerHook``: a ``docker.APIClient`` to a Docker-API engine (Airflow's docker provider).

``base_url`` is one URL or a list tried in turn (the first that answers a ping wins);
``version`` the API version (``None``/``"auto"``: the engine's); ``tls`` a ``docker.tls.TLSConfig``
(``construct_tls_config`` makes one from file paths); ``timeout`` seconds per API call. With a
``docker_conn_id`` (type ``docker``), the client logs in to the registry the connection names:
``host[:port]``, ``login``, ``password``, and in its extra ``email`` and ``reauth`` (true).
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.sdk.basehook import BaseHook
from statewright.sdk.connection import Connection

if TYPE_CHECKING:
    from docker import APIClient
    from docker.tls import TLSConfig

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "DockerHook"]

DEFAULT_TIMEOUT_SECONDS = 60
MIN_API_VERSION = "1.24"
"""The API version a client speaks until the engine has said its own."""
_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


class DockerHook(BaseHook):
    conn_name_attr: ClassVar[str] = "docker_conn_id"
    default_conn_name: ClassVar[str] = "docker_default"
    conn_type: ClassVar[str] = "docker"
    hook_name: ClassVar[str] = "Docker"

    def __init__(self, docker_conn_id: str | None = default_conn_name,
                 base_url: str | list[str] | None = None, version: str | None = None,
                 tls: TLSConfig | bool | None = None,
                 timeout: int = DEFAULT_TIMEOUT_SECONDS) -> None:
        super().__init__()
        if not base_url:
            raise StatewrightError("URL to the Docker server not provided.")
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if tls:
            urls = [u.replace("tcp://", "https://", 1) if u.startswith("tcp://") else u
                    for u in urls]
        self.docker_conn_id = docker_conn_id
        self._base_urls = urls
        self._version = None if version == "auto" else version
        self._tls = tls or False
        self._timeout = timeout
        self._client_created = False

    @staticmethod
    def construct_tls_config(ca_cert: str | None = None, client_cert: str | None = None,
                             client_key: str | None = None, verify: bool = True,
                             assert_hostname: str | bool | None = None,
                             ssl_version: str | None = None) -> TLSConfig | bool:
        """A ``TLSConfig`` when the three files are given, else False (``assert_hostname`` and
        ``ssl_version`` are gone from docker 7's ``TLSConfig``: accepted and not used)."""
        del assert_hostname, ssl_version
        if not (ca_cert and client_cert and client_key):
            return False
        from docker.tls import TLSConfig

        return TLSConfig(ca_cert=ca_cert, client_cert=(client_cert, client_key), verify=verify)

    @cached_property
    def api_client(self) -> APIClient:
        """The client of the first engine that answers (cached)."""
        from docker import APIClient
        from docker.errors import APIError, DockerException
        from requests.exceptions import RequestException

        failures = []
        for url in self._base_urls:
            client = None
            if url.startswith(("unix://", "unix:/")) and not os.path.exists(
                    "/" + url.split(":", 1)[1].lstrip("/")):
                failures.append(f"{url}: no such socket")  # the SDK would leak its socket
                continue
            try:
                # A fixed version first: the SDK's "auto" asks the engine from the constructor,
                # which leaks its connection when the engine does not answer.
                client = APIClient(base_url=url, version=self._version or MIN_API_VERSION,
                                   tls=self._tls, timeout=self._timeout)
                if not client.ping():
                    raise StatewrightError(f"Failed to ping host {url}.")
                if self._version is None:
                    client._version = client.version(api_version=False)["ApiVersion"]
                if self.docker_conn_id:
                    self._login(client, self.get_connection(self.docker_conn_id))
            except BaseException as exc:
                if client is not None:
                    client.close()
                if isinstance(exc, APIError) or not isinstance(
                        exc, DockerException | RequestException):
                    raise
                self.log.error("Failed to establish connection to Docker host %s: %s", url, exc)
                failures.append(f"{url}: {exc}")
            else:
                self._client_created = True
                return client
        raise StatewrightError("Failed to establish connection to any given Docker hosts "
                               f"({'; '.join(failures)}).")

    @property
    def client_created(self) -> bool:
        return self._client_created

    def get_conn(self) -> APIClient:
        return self.api_client

    def _login(self, client: APIClient, conn: Connection) -> None:
        if not conn.host:
            raise StatewrightError(f"connection {conn.conn_id!r}: no Docker registry URL "
                                   "(host) provided.")
        if not conn.login:
            raise StatewrightError(f"connection {conn.conn_id!r}: no Docker registry username "
                                   "(login) provided.")
        registry = f"{conn.host}:{conn.port}" if conn.port else conn.host
        extra = conn.extra_dejson
        reauth: Any = extra.get("reauth", True)
        if isinstance(reauth, str):
            if reauth.lower() not in (*_TRUE, *_FALSE):
                raise ValueError(f"Unable parse `reauth` value {reauth!r} to bool.")
            reauth = reauth.lower() in _TRUE
        self.log.info("Login into Docker Registry: %s", registry)
        client.login(username=conn.login, password=conn.password, registry=registry,
                     email=extra.get("email") or None, reauth=reauth)

    def test_connection(self) -> tuple[bool, str]:
        try:
            self.api_client.version()
        except Exception as exc:
            return False, str(exc)
        return True, "Connection successfully tested"
