"""The web UI's side of authentication: the login page (refusing cross-site posts), logout,
the users page (end a user's sign-ins, revoke tokens), the audit log page, and the
OpenAPI document (behind a login too; the docs pages that read it are in ``api.docs``)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from statewright.api.auth.admin import event_logs
from statewright.api.auth.credentials import (
    SESSION_COOKIE,
    Unauthenticated,
    csrf_token,
    session_lifetime,
    session_secret,
)
from statewright.api.auth.login import TooManyAttempts, login
from statewright.api.auth.permissions import ADMIN, AUTHENTICATED, PUBLIC
from statewright.api.deps import MAX_OFFSET, engine_of, reading
from statewright.api.errors import NotFound
from statewright.api.ui.views import TEMPLATES
from statewright.core.auth import GRANTS, Permission, Role
from statewright.core.clock import utcnow
from statewright.db.repositories import users as user_repo
from statewright.services.auth import accounts

router = APIRouter(include_in_schema=False)
OPENAPI_PATH = "/api/v1/openapi.json"
AUDIT_PAGE_SIZE = 100


def auth_context(request: Request) -> dict[str, Any]:
    """What every template gets: the signed-in user and the page's CSRF token."""
    identity = getattr(request.state, "identity", None)
    secret = session_secret(request)
    token = csrf_token(request, secret) if secret and identity and identity.via == "session" \
        else ""
    return {"identity": identity, "csrf_token": token}


def safe_next(target: str | None) -> str:
    """Only a path of this site (never ``//host`` or ``https://…``): no open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _login_page(request: Request, *, next_url: str, error: str = "", username: str = "",
                status_code: int = 200) -> Response:
    return TEMPLATES.TemplateResponse(request, "login.html", {
        "title": "Log in · statewright", "page": "login", "next": next_url, "error": error,
        "username": username}, status_code=status_code)


@router.get("/login", response_class=HTMLResponse, openapi_extra=PUBLIC)
def login_page(request: Request, next: Annotated[str | None, Query()] = None) -> Response:
    return _login_page(request, next_url=safe_next(next))


def cross_site(request: Request) -> bool:
    """True for a form posted from another site (login CSRF): the browser says so in
    ``Sec-Fetch-Site`` (every current browser sends it, whatever proxy rewrote ``Host``), or,
    without it, its ``Origin`` is not this server's. A request carrying neither (a script, an
    old browser) is not refused."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site.lower() not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return False
    parts = urlsplit(origin)
    return (origin == "null" or parts.scheme != request.url.scheme
            or parts.netloc.lower() != (request.headers.get("host") or "").lower())


@router.post("/login", response_class=HTMLResponse, openapi_extra=PUBLIC)
async def login_submit(request: Request) -> Response:
    if cross_site(request):
        request.state.audit_action = "auth.login_cross_site"
        return _login_page(request, next_url="/", status_code=403,
                           error="This login form was sent from another site and was refused. "
                                 "Log in on this page.")
    fields = parse_qs((await request.body()).decode(errors="replace"))
    username = (fields.get("username") or [""])[0]
    password = (fields.get("password") or [""])[0]
    next_url = safe_next((fields.get("next") or ["/"])[0])
    if not username or not password:
        return _login_page(request, next_url=next_url, username=username, status_code=422,
                           error="Enter a username and a password.")
    try:
        user = await login(request, username, password)
    except Unauthenticated:
        return _login_page(request, next_url=next_url, username=username, status_code=401,
                           error="Wrong username or password.")
    except TooManyAttempts as exc:
        return _login_page(request, next_url=next_url, username=username, status_code=429,
                           error=exc.detail)
    secret, _ = accounts.create_token(engine_of(request), user.username, kind="session",
                                      name="web UI", now=utcnow(),
                                      lifetime=session_lifetime(request))
    response = RedirectResponse(next_url, status_code=303)
    response.set_cookie(SESSION_COOKIE, secret, httponly=True, samesite="lax", path="/",
                        secure=request.url.scheme == "https",
                        max_age=int(session_lifetime(request).total_seconds()))
    return response


@router.post("/logout", openapi_extra=AUTHENTICATED)
def logout(request: Request) -> Response:
    """Ends the web UI session (the cookie and the stored session)."""
    identity = request.state.identity
    request.state.audit_action = "auth.logout"
    if identity.via == "session" and identity.token_id is not None:
        accounts.end_session(engine_of(request), identity.token_id, utcnow())
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/event-logs", response_class=HTMLResponse, openapi_extra=ADMIN)
def event_log_page(
    request: Request,
    dag_id: Annotated[str | None, Query()] = None,
    owner: Annotated[str | None, Query()] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    logs = event_logs(request, limit=AUDIT_PAGE_SIZE, offset=offset, dag_id=dag_id or None,
                      owner=owner or None, event=None, outcome=None)
    return TEMPLATES.TemplateResponse(request, "event_logs.html", {
        "title": "Audit log · statewright", "page": "event_logs", "logs": logs,
        "dag_id": dag_id or "", "owner": owner or "", "offset": offset,
        "limit": AUDIT_PAGE_SIZE})


@router.get("/users", response_class=HTMLResponse, openapi_extra=ADMIN)
def users_page(request: Request) -> Response:
    """Users with their open web UI sessions and API tokens; an admin ends a user's sign-ins
    or revokes a token here."""
    now = utcnow()
    users = accounts.list_users(engine_of(request))
    with reading(request) as conn:
        sessions = user_repo.list_tokens(conn, None, "session")
        tokens = user_repo.list_tokens(conn, None, "api")
    open_sessions: dict[str, int] = {}
    for row in sessions:
        if row.revoked_at is None and (row.expires_at is None or row.expires_at > now):
            open_sessions[row.username] = open_sessions.get(row.username, 0) + 1
    live = [t for t in tokens if t.revoked_at is None
            and (t.expires_at is None or t.expires_at > now)]
    return TEMPLATES.TemplateResponse(request, "users.html", {
        "title": "Users · statewright", "page": "users", "users": users,
        "sessions": open_sessions, "tokens": live, "roles": role_table(),
        "active": {u.username: accounts.is_active(u) for u in users}})


PERMISSION_WORDS = {
    Permission.AUTHENTICATED: "Sign in and out, own API tokens, favourite DAGs",
    Permission.READ: "See every page and read the API: DAGs, runs, logs, XComs, assets, pools",
    Permission.OPERATE: "Trigger, clear, mark, cancel, pause and backfill; respond to "
                        "required actions; write notes",
    Permission.ADMIN: "Manage users, connections, variables and pools; read the audit log",
}
"""What a person reads of each permission (the users page's roles table)."""


def role_table() -> list[dict[str, Any]]:
    """Each role with what it may do, from ``core.auth.GRANTS``."""
    return [{"role": role.value,
             "may": [PERMISSION_WORDS[p] for p in Permission if p in GRANTS[role]
                     and p in PERMISSION_WORDS]}
            for role in Role]


@router.post("/users/{username}/end-sessions", openapi_extra=ADMIN)
async def users_end_sessions(request: Request, username: str) -> Response:
    fields = parse_qs((await request.body()).decode(errors="replace"))
    revoke = (fields.get("revoke_api_tokens") or [""])[0] in ("1", "on", "true")
    try:
        await run_in_threadpool(accounts.end_sign_ins, engine_of(request), username, utcnow(),
                                api_tokens=revoke)
    except accounts.UserNotFound as exc:
        raise NotFound(str(exc)) from None
    return RedirectResponse("/users", status_code=303)


@router.post("/users/tokens/{token_id}/revoke", openapi_extra=ADMIN)
def users_revoke_token(request: Request, token_id: int) -> Response:
    try:
        accounts.revoke_token(engine_of(request), token_id, by=request.state.identity,
                              now=utcnow())
    except accounts.AccountError as exc:
        raise NotFound(str(exc)) from None
    return RedirectResponse("/users", status_code=303)


@router.get(OPENAPI_PATH)
def openapi_document(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())
