"""The admin pages of connections and variables (passwords are write-only: never shown)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from statewright.api.deps import engine_of
from statewright.services.secrets.admin import SecretsAdmin, public_connection, public_variable

router = APIRouter(include_in_schema=False)


def _admin(request: Request) -> SecretsAdmin:
    from statewright.api.routers.secrets import cipher_of

    cipher = cipher_of(request)
    return SecretsAdmin(engine_of(request), lambda: cipher)


@router.get("/connections", response_class=HTMLResponse)
def connections_page(request: Request) -> Response:
    from statewright.api.ui.views import _page

    rows = [public_connection(c) for c in _admin(request).list_connections()]
    return _page(request, "connections.html", title="Connections · statewright",
                 page="connections", connections=rows)


@router.get("/variables", response_class=HTMLResponse)
def variables_page(request: Request) -> Response:
    from statewright.api.ui.views import _page

    rows = [public_variable(v) for v in _admin(request).list_variables()]
    return _page(request, "variables.html", title="Variables · statewright",
                 page="variables", variables=rows)
