"""The one dependency installed on the whole app (API and UI): it finds the permission the
matched route needs (declared, or derived from the method), authenticates the request and checks
the role. A route that declares nothing is therefore authenticated, and writes need operator."""

from __future__ import annotations

from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, Response

from statewright.api.auth.credentials import (
    CSRF_FIELD,
    Forbidden,
    Unauthenticated,
    identify,
)
from statewright.api.auth.permissions import route_permission
from statewright.core.auth import READ_METHODS, Permission, allows, least_role

FORM = "application/x-www-form-urlencoded"


async def _form_csrf(request: Request) -> str | None:
    """The CSRF token of an HTML form post (the header carries it for scripts)."""
    if request.method.upper() in READ_METHODS or "authorization" in request.headers:
        return None
    if not request.headers.get("content-type", "").startswith(FORM):
        return None
    fields = parse_qs((await request.body()).decode(errors="replace"))
    return next(iter(fields.get(CSRF_FIELD, [])), None)


async def authorize(request: Request) -> None:
    permission = route_permission(request.scope.get("route"), request.method)
    request.state.permission = permission
    if permission is Permission.PUBLIC:
        return
    identity = await run_in_threadpool(identify, request, await _form_csrf(request))
    request.state.identity = identity
    if not allows(identity.role, permission):
        role = least_role(permission)
        raise Forbidden(f"Forbidden: {request.method} {request.url.path} needs the role "
                        f"{role.value if role else permission.value} or higher; "
                        f"{identity.username!r} is {identity.role.value}. Nothing was changed.")


def _is_page(request: Request) -> bool:
    return (request.method.upper() in READ_METHODS
            and not request.url.path.startswith(("/api/", "/metrics")))


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthenticated)
    async def _unauthenticated(request: Request, exc: Unauthenticated) -> Response:
        if _is_page(request):
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)
        return JSONResponse({"detail": exc.detail}, status_code=401,
                            headers={"WWW-Authenticate": 'Bearer realm="statewright"'})

    @app.exception_handler(Forbidden)
    async def _forbidden(request: Request, exc: Forbidden) -> Response:
        if _is_page(request):
            from statewright.api.ui.views import TEMPLATES

            return TEMPLATES.TemplateResponse(request, "forbidden.html", {
                "title": "Forbidden · statewright", "detail": exc.detail}, status_code=403)
        return JSONResponse({"detail": exc.detail}, status_code=403)
