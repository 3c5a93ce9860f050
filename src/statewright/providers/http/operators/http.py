"""``HttpOperator``: one HTTP request (or a series of pages) to an ``http`` connection.

As Airflow's: ``endpoint``, ``method`` (POST by default), ``data``, ``headers``,
``extra_options``, ``request_kwargs`` (``json=`` ...), ``http_conn_id``; ``response_check``
(false fails the try), ``response_filter`` (what goes to XCom; else the response's text),
``pagination_function`` (the next request's ``endpoint``/``data``/``headers``/
``extra_options`` from the last response, or None to stop: check and filter then get the list
of responses), ``log_response``. With ``deferrable=True`` the request is sent by the
triggerer (``HttpTrigger``) and the task goes on with its answer (status and body; the headers
are not carried); further pages are fetched by the task. ``retry_args`` is accepted and not
used. ``SimpleHttpOperator`` is Airflow 2's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar
from urllib.parse import urlencode

import httpx

from statewright.core.errors import StatewrightError
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.http_hook import HttpHook, HttpResponse
from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.triggers.http import HttpTrigger

__all__ = ["HttpOperator", "SimpleHttpOperator"]


class HttpOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("endpoint", "data", "headers")
    template_fields_renderers: ClassVar[dict[str, str]] = {"headers": "json", "data": "py"}
    template_ext: ClassVar[Sequence[str]] = ()

    def __init__(self, *, endpoint: str | None = None, method: str = "POST", data: Any = None,
                 headers: dict[str, str] | None = None,
                 pagination_function: Callable[..., Any] | None = None,
                 response_check: Callable[..., Any] | None = None,
                 response_filter: Callable[..., Any] | None = None,
                 extra_options: dict[str, Any] | None = None,
                 request_kwargs: dict[str, Any] | None = None,
                 http_conn_id: str = HttpHook.default_conn_name, log_response: bool = False,
                 auth_type: Any = None, retry_args: dict[str, Any] | None = None,
                 deferrable: bool = False, **kwargs: Any) -> None:
        for name in ("tcp_keep_alive", "tcp_keep_alive_idle", "tcp_keep_alive_count",
                     "tcp_keep_alive_interval"):
            kwargs.pop(name, None)  # requests' transport settings: not used with httpx
        super().__init__(**kwargs)
        self.endpoint = endpoint
        self.method = method
        self.data = data
        self.headers = dict(headers or {})
        self.pagination_function = pagination_function
        self.response_check = response_check
        self.response_filter = response_filter
        self.extra_options = dict(extra_options or {})
        self.request_kwargs = dict(request_kwargs or {})
        self.http_conn_id = http_conn_id
        self.log_response = log_response
        self.auth_type = auth_type
        self.retry_args = retry_args
        self.deferrable = deferrable

    @property
    def hook(self) -> HttpHook:
        return HttpHook(self.method, http_conn_id=self.http_conn_id, auth_type=self.auth_type)

    def execute(self, context: Any) -> Any:
        if self.deferrable:
            self.execute_async(context)
        hook = self.hook
        self.log.info("Calling HTTP method %s %s", self.method, self.endpoint)
        response = hook.run(self.endpoint, self.data, self.headers, self.extra_options,
                            **self.request_kwargs)
        return self._finish(context, hook, response)

    def _finish(self, context: Any, hook: HttpHook, response: httpx.Response) -> Any:
        if self.pagination_function is not None:
            return self.process_response(context, self.paginate_sync(hook, response))
        return self.process_response(context, response)

    def execute_async(self, context: Any) -> None:
        """Defer: the triggerer sends the request once and hands its answer back."""
        endpoint, data = self.endpoint, self.data
        if self.method.upper() in ("GET", "HEAD") and isinstance(data, dict):
            sep = "&" if endpoint and "?" in endpoint else "?"
            endpoint, data = f"{endpoint or ''}{sep}{urlencode(data)}", None
        every_status = list(range(100, 600))  # the first answer ends the trigger
        self.defer(trigger=HttpTrigger(
            endpoint=endpoint, http_conn_id=self.http_conn_id, method=self.method,
            headers=self.headers or None, data=data, success_status_codes=every_status,
            timeout_seconds=float(self.extra_options.get("timeout", 30))),
            method_name="execute_complete")

    def execute_complete(self, context: Any, event: dict[str, Any] | None = None) -> Any:
        event = event or {}
        if event.get("status") == "error":
            raise StatewrightError(event.get("message") or f"{self.method} {self.endpoint} "
                                   "failed in the triggerer")
        hook = self.hook
        request = httpx.Request(self.method.upper(), hook.url_from_endpoint(self.endpoint))
        response = HttpResponse(int(event.get("status", 200)), text=event.get("body") or "",
                                request=request)
        if self.extra_options.get("check_response", True):
            hook.check_response(response)
        return self._finish(context, hook, response)

    def paginate_sync(self, hook: HttpHook, response: httpx.Response) -> list[httpx.Response]:
        responses = [response]
        while True:
            assert self.pagination_function is not None
            next_page = self.pagination_function(response)
            if not next_page:
                return responses
            response = hook.run(**self._next_page_request(next_page))
            responses.append(response)

    def _next_page_request(self, next_page: dict[str, Any]) -> dict[str, Any]:
        page_data = next_page.get("data")
        if isinstance(self.data, dict) and isinstance(page_data, dict):
            data: Any = {**self.data, **page_data}
        else:
            data = page_data or self.data
        return {"endpoint": next_page.get("endpoint") or self.endpoint, "data": data,
                "headers": {**self.headers, **(next_page.get("headers") or {})},
                "extra_options": {**self.extra_options, **(next_page.get("extra_options") or {})},
                **self.request_kwargs}

    def process_response(self, context: Any,
                         response: httpx.Response | list[httpx.Response]) -> Any:
        responses = response if isinstance(response, list) else [response]
        if self.log_response:
            for one in responses:
                self.log.info(one.text)
        if self.response_check is not None:
            kwargs = determine_kwargs(self.response_check, [response], context)
            if not self.response_check(response, **kwargs):
                raise StatewrightError("Response check returned False.")
        if self.response_filter is not None:
            kwargs = determine_kwargs(self.response_filter, [response], context)
            return self.response_filter(response, **kwargs)
        if isinstance(response, list):
            return [one.text for one in response]
        return response.text


class SimpleHttpOperator(HttpOperator):
    """Airflow 2's name of ``HttpOperator``."""
