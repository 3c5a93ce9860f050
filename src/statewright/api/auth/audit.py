"""The audit log's writer: one row per API action (every request that may change something,
every refused request, every login), written after the response is known: who, what, target,
when, outcome, client address. Reads are not recorded."""

from __future__ import annotations

import json
import logging
from typing import Any

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from statewright.core.auth import READ_METHODS
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import audit as audit_repo
from statewright.sdk import masking

log = logging.getLogger(__name__)
DENIED = frozenset({401, 403, 429})
_DETAIL_BYTES = 4000


def outcome_of(status: int) -> str:
    if status in DENIED:
        return "denied"
    if status >= 500:
        return "error"
    return "failed" if status >= 400 else "success"


def note_dry_run(state: Any, dry_run: bool) -> None:
    """Say that this request only previewed its action (``state``: the request's state): its
    audit row names the action ``<action>_dry_run``, never the action itself."""
    if dry_run:
        state.audit_dry_run = True


def _recorded(scope: Scope, status: int) -> bool:
    if str(scope.get("path", "")).startswith("/static/"):
        return False
    state = scope.get("state") or {}
    return (status in DENIED or status == 413 or "audit_action" in state
            or str(scope.get("method", "GET")).upper() not in READ_METHODS)


def _detail(status: int, body: bytes) -> str | None:
    if status < 400 or not body:
        return None
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):
        return None
    return str(detail)[:_DETAIL_BYTES] if detail is not None else None


def entry(scope: Scope, status: int, body: bytes) -> dict[str, Any]:
    """The audit row of one answered request."""
    state = scope.get("state") or {}
    route = scope.get("route")
    params: dict[str, Any] = scope.get("path_params") or {}
    identity = state.get("identity")
    client = scope.get("client")
    action = state.get("audit_action") or getattr(route, "name", None) or (
        "request_too_large" if status == 413 else "unknown_route")
    if state.get("audit_dry_run") and not str(action).endswith("_dry_run"):
        action = f"{action}_dry_run"  # a preview (a Clear dialog opened): nothing changed
    return dict(
        at=utcnow(), username=state.get("audit_username") or getattr(identity, "username", None),
        action=str(action), method=str(scope.get("method", "")), path=str(scope.get("path", "")),
        dag_id=params.get("dag_id"),
        target=", ".join(f"{k}={v}" for k, v in params.items()) or None,
        outcome=outcome_of(status), status_code=status,
        client_address=client[0] if client else None,
        detail=masking.redact(state.get("audit_detail") or _detail(status, body)))


class AuditLog:
    """ASGI middleware writing the audit row once the response has been sent."""

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app, self.engine = app, engine

    def _write(self, row: dict[str, Any]) -> None:
        try:
            with transaction(self.engine) as conn:
                audit_repo.record(conn, **row)
        except Exception:  # the answer is sent: a failed audit write is logged, not raised
            log.exception("could not write the audit log row %s", row)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, body = 500, bytearray()

        async def _send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and status >= 400:
                body.extend(message.get("body", b"")[: _DETAIL_BYTES - len(body)])
            await send(message)

        try:
            await self.app(scope, receive, _send)
        finally:
            if _recorded(scope, status):
                await run_in_threadpool(self._write, entry(scope, status, bytes(body)))
