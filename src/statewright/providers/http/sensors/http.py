"""``HttpSensor`` at the path of Airflow's http provider: poke ``endpoint`` of the connection
``http_conn_id`` (``http_default``) until it answers with a success for which
``response_check`` (when given) is true.

As Airflow's: ``request_params`` are the query of a GET (else the body), ``headers``,
``extra_options`` and ``request_kwargs`` go to ``HttpHook.run``; an error status in
``response_error_codes_allowlist`` (404 by default) means "not yet", any other fails the try.
``deferrable=True`` polls in the triggerer (statewright's ``HttpSensor``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from statewright.sdk.http_hook import HttpHook, HttpResponseError
from statewright.sdk.sensors.http import HttpSensor as _SdkHttpSensor
from statewright.sdk.triggers.http import HttpTrigger

__all__ = ["HttpSensor"]


class HttpSensor(_SdkHttpSensor):
    def __init__(self, *, endpoint: str, http_conn_id: str = HttpHook.default_conn_name,
                 method: str = "GET", request_params: dict[str, Any] | None = None,
                 request_kwargs: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None,
                 response_error_codes_allowlist: list[str] | list[int] | None = None,
                 response_check: Callable[..., Any] | None = None,
                 extra_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        for name in ("tcp_keep_alive", "tcp_keep_alive_idle", "tcp_keep_alive_count",
                     "tcp_keep_alive_interval"):
            kwargs.pop(name, None)
        super().__init__(endpoint=endpoint, http_conn_id=http_conn_id, method=method,
                         headers=headers, data=request_params, response_check=response_check,
                         response_error_codes_allowlist=[
                             int(c) for c in response_error_codes_allowlist or ("404",)],
                         **kwargs)
        self.request_params = request_params
        self.request_kwargs = dict(request_kwargs or {})
        self.extra_options = dict(extra_options or {})

    def poke(self, context: Any) -> bool:
        hook = HttpHook(self.method, http_conn_id=str(self.http_conn_id))
        self.log.info("Poking: %s", self.endpoint)
        try:
            response = hook.run(self.endpoint, data=self.request_params, headers=self.headers,
                                extra_options=self.extra_options, **self.request_kwargs)
        except HttpResponseError as exc:
            if exc.status_code in self.response_error_codes_allowlist:
                return False
            raise
        return self._check(response, context)

    def _defer(self) -> None:
        """Poll from the triggerer; ``request_params`` of a GET or HEAD go in the query."""
        endpoint, data = self.endpoint, self.data
        if self.method in ("GET", "HEAD") and isinstance(data, dict):
            sep = "&" if endpoint and "?" in endpoint else "?"
            endpoint, data = f"{endpoint or ''}{sep}{urlencode(data)}", None
        self.defer(
            trigger=HttpTrigger(endpoint=endpoint, http_conn_id=self.http_conn_id,
                                method=self.method, headers=self.headers, data=data,
                                poke_interval=max(self.poke_interval, 0.01),
                                timeout_seconds=self.request_timeout),
            method_name="execute_complete", timeout=timedelta(seconds=self.timeout))
