"""``HttpHook`` at the path of Airflow's http provider (it lives in ``statewright.sdk``)."""

from __future__ import annotations

from statewright.sdk.http_hook import HttpHook, HttpResponseError

__all__ = ["HttpHook", "HttpResponseError"]
