"""``GoogleBaseHook``: credentials and project from a ``google_cloud_platform`` connection
(Airflow's google provider).

The connection's extra may give (each also under the older ``extra__google_cloud_platform__``
prefix):

- ``keyfile_dict``: a service account's JSON key, as a JSON string or an object;
- ``key_path``: the path of such a key file (JSON; legacy ``.p12`` keys are refused);
- ``credential_config_file``: a workload identity federation file (a path, or its JSON);
- ``is_anonymous``: no credentials at all (public buckets, emulators);
- ``project``: the project (else the key's ``project_id``, else the environment's);
- ``scope``: comma-separated OAuth scopes (default ``cloud-platform``);
- ``impersonation_chain``: a service account (or comma-separated chain) to impersonate;
- ``quota_project_id``: the project billed for quota.

Without any of the key fields, Google's application default credentials are used (the
``GOOGLE_APPLICATION_CREDENTIALS`` file, ``gcloud``'s login, the metadata server). When
``STORAGE_EMULATOR_HOST`` is set (a Cloud Storage emulator, as the client library reads it)
and no key is configured, the credentials are anonymous. A connection id that does not
exist means the application default credentials, with a warning.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar, cast

from statewright.sdk.basehook import BaseHook
from statewright.sdk.secrets import ConnectionNotFound

__all__ = ["PROVIDE_PROJECT_ID", "GoogleBaseHook", "get_field"]

log = logging.getLogger("statewright.task.hooks.google")

PROVIDE_PROJECT_ID: str = cast(str, None)
"""The default of a ``project_id`` argument that falls back to the connection's project."""

DEFAULT_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
_PREFIX = "extra__google_cloud_platform__"

T = TypeVar("T", bound=Callable[..., Any])


def get_field(extras: dict[str, Any], field_name: str) -> Any:
    """A field of the extra, by its short name or the older prefixed one ("" is None)."""
    if field_name.startswith("extra__"):
        raise ValueError(f"Got prefixed name {field_name}; please remove the {_PREFIX!r} "
                         "prefix when using this method.")
    value = extras[field_name] if field_name in extras else extras.get(_PREFIX + field_name)
    return None if value == "" else value


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


class GoogleBaseHook(BaseHook):
    conn_name_attr: ClassVar[str] = "gcp_conn_id"
    default_conn_name: ClassVar[str] = "google_cloud_default"
    conn_type: ClassVar[str] = "google_cloud_platform"
    hook_name: ClassVar[str] = "Google Cloud"

    def __init__(self, gcp_conn_id: str = "google_cloud_default",
                 impersonation_chain: str | Sequence[str] | None = None,
                 quota_project_id: str | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.gcp_conn_id = gcp_conn_id
        self.impersonation_chain = impersonation_chain
        self.quota_project_id = quota_project_id
        self._extras: dict[str, Any] | None = None
        self._cached_credentials: Any = None
        self._cached_project_id: str | None = None

    # -- the connection -------------------------------------------------------------------------

    @property
    def extras(self) -> dict[str, Any]:
        """The connection's extra (empty when the connection does not exist)."""
        if self._extras is None:
            try:
                self._extras = dict(self.get_connection(self.gcp_conn_id).extra_dejson)
            except ConnectionNotFound:
                log.warning("Unable to find Google Cloud connection %r, using the application "
                            "default credentials", self.gcp_conn_id)
                self._extras = {}
        return self._extras

    def _get_field(self, f: str, default: Any = None) -> Any:
        value = get_field(self.extras, f)
        return default if value is None else value

    @property
    def scopes(self) -> Sequence[str]:
        scope = self._get_field("scope")
        return [s.strip() for s in scope.split(",")] if scope else list(DEFAULT_SCOPES)

    @property
    def project_id(self) -> str | None:
        return self.get_credentials_and_project_id()[1]

    @property
    def num_retries(self) -> int:
        return int(self._get_field("num_retries", 5))

    # -- credentials ----------------------------------------------------------------------------

    def get_credentials_and_project_id(self) -> tuple[Any, str | None]:
        """The credentials and the project, made once per hook."""
        if self._cached_credentials is None:
            credentials, project = self._base_credentials()
            credentials = self._impersonated(credentials)
            quota = self.quota_project_id or self._get_field("quota_project_id")
            if quota and hasattr(credentials, "with_quota_project"):
                credentials = credentials.with_quota_project(quota)
            self._cached_credentials = credentials
            self._cached_project_id = self._get_field("project") or project
        return self._cached_credentials, self._cached_project_id

    def get_credentials(self) -> Any:
        return self.get_credentials_and_project_id()[0]

    def _base_credentials(self) -> tuple[Any, str | None]:
        from google.auth.credentials import AnonymousCredentials
        from google.oauth2 import service_account

        if _truthy(self._get_field("is_anonymous")):
            return AnonymousCredentials(), None
        if self._get_field("key_secret_name"):
            raise ValueError("key_secret_name (a key in Secret Manager) is not supported; give "
                             "the key as keyfile_dict or key_path")
        keyfile = self._get_field("keyfile_dict")
        if keyfile:
            try:
                info = keyfile if isinstance(keyfile, dict) else json.loads(keyfile)
            except json.JSONDecodeError as exc:
                raise ValueError("Invalid key JSON.") from exc
            return (service_account.Credentials.from_service_account_info(
                info, scopes=self.scopes), info.get("project_id"))
        key_path = self._get_field("key_path")
        if key_path:
            if not str(key_path).endswith(".json"):
                raise ValueError("Unrecognised extension for key file (only .json keys; "
                                 "legacy .p12 keys are not supported)")
            credentials = service_account.Credentials.from_service_account_file(
                key_path, scopes=self.scopes)
            return credentials, credentials.project_id
        config = self._get_field("credential_config_file")
        if config:
            return self._federated(config)
        if os.environ.get("STORAGE_EMULATOR_HOST"):
            return AnonymousCredentials(), None
        import google.auth

        credentials, project = google.auth.default(scopes=self.scopes)
        return credentials, project

    def _federated(self, config: Any) -> tuple[Any, str | None]:
        import google.auth

        if isinstance(config, dict) or str(config).lstrip().startswith("{"):
            info = config if isinstance(config, dict) else json.loads(config)
            credentials, project = google.auth.load_credentials_from_dict(info,
                                                                         scopes=self.scopes)
        else:
            credentials, project = google.auth.load_credentials_from_file(config,
                                                                         scopes=self.scopes)
        return credentials, project

    def _impersonated(self, credentials: Any) -> Any:
        chain = self.impersonation_chain or self._get_field("impersonation_chain")
        if not chain:
            return credentials
        if isinstance(chain, str):
            chain = [s.strip() for s in chain.split(",")]
        from google.auth import impersonated_credentials

        *delegates, target = list(chain)
        return impersonated_credentials.Credentials(
            source_credentials=credentials, target_principal=target, delegates=delegates or None,
            target_scopes=list(self.scopes))

    def get_client_options(self, api_endpoint_override: str | None = None) -> Any:
        """The client options: ``api_endpoint_override`` when given, else the universe domain
        of ``GOOGLE_CLOUD_UNIVERSE_DOMAIN`` (the Cloud Storage client itself honours
        ``STORAGE_EMULATOR_HOST``)."""
        from google.api_core.client_options import ClientOptions

        if api_endpoint_override:
            return ClientOptions(api_endpoint=api_endpoint_override)
        universe = os.environ.get("GOOGLE_CLOUD_UNIVERSE_DOMAIN")
        return ClientOptions(universe_domain=universe) if universe else ClientOptions()

    # -- project fallback -----------------------------------------------------------------------

    @staticmethod
    def fallback_to_default_project_id(func: T) -> T:
        """Call ``func`` with ``project_id`` set to the connection's project when it is not
        given (arguments must be passed by keyword, as in Airflow)."""

        @functools.wraps(func)
        def inner(self: GoogleBaseHook, *args: Any, **kwargs: Any) -> Any:
            if args:
                raise TypeError("You must use keyword arguments in this method.")
            if not kwargs.get("project_id"):
                kwargs["project_id"] = self.project_id
            if not kwargs["project_id"]:
                raise ValueError("The project id must be passed either as keyword project_id "
                                 "parameter or as project_id extra in Google Cloud connection "
                                 "definition. Both are not set!")
            return func(self, **kwargs)

        return cast(T, inner)

    def test_connection(self) -> tuple[bool, str]:
        """Anonymous credentials pass as they are; others must obtain an access token."""
        try:
            from google.auth.credentials import AnonymousCredentials

            credentials = self.get_credentials()
            if isinstance(credentials, AnonymousCredentials):
                return True, "Credentials are anonymous"
            import google.auth.transport.requests

            credentials.refresh(google.auth.transport.requests.Request())
            return True, "Connection successfully tested"
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"
