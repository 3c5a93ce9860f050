"""What the scripts the official ``apache-airflow-client`` runs (``airflow_client_calls.py``,
``airflow_client_admin_calls.py``; in the client's own virtualenv, next to this file, not
collected by pytest) share: a token from ``/auth/token`` and ``call``, which records each call's
answer, or its error status, in ``out`` (printed as one JSON object at the end)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from airflow_client.client.exceptions import ApiException

out: dict[str, Any] = {}


def token(url: str, username: str, password: str) -> str:
    """An access token for ``username``; ``out["token_status"]`` says what the server answered."""
    request = urllib.request.Request(
        url + "/auth/token", method="POST",
        data=json.dumps({"username": username, "password": password}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        out["token_status"] = answer.status
        return str(json.loads(answer.read())["access_token"])


def call(name: str, fn: Callable[[], Any]) -> Any:
    try:
        value = fn()
    except ApiException as exc:
        out[name] = {"error": exc.status, "body": exc.body}
        return None
    out[name] = value.to_dict() if hasattr(value, "to_dict") else value
    return value
