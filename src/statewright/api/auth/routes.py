"""Routes of authentication: a JWT for a username and password, who am I, and one's own
long-lived API tokens (create, list, revoke)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from statewright.api.auth import schemas as a
from statewright.api.auth.credentials import key_of
from statewright.api.auth.jwt_tokens import issue
from statewright.api.auth.login import login
from statewright.api.auth.permissions import AUTHENTICATED, PUBLIC
from statewright.api.deps import engine_of, reading, settings_of
from statewright.api.errors import NotFound
from statewright.core.auth import GRANTS, Role
from statewright.core.clock import utcnow
from statewright.db.repositories import users as user_repo
from statewright.services.auth import accounts
from statewright.services.auth.accounts import AccountError, Identity

router = APIRouter(tags=["Auth"])
root_router = APIRouter(tags=["Auth"])
"""``POST /auth/token`` at the root, where Airflow 3's clients ask for a token."""


def identity_of(request: Request) -> Identity:
    return request.state.identity  # type: ignore[no-any-return]


@router.post("/auth/token", response_model=a.AccessToken, status_code=201,
             openapi_extra=PUBLIC,
             responses={401: {"description": "Wrong username or password"},
                        429: {"description": "Too many failed logins (see Retry-After)"}})
async def create_access_token(request: Request, body: a.LoginBody) -> a.AccessToken:
    """A signed JWT for ``Authorization: Bearer …``, valid STATEWRIGHT_JWT_EXPIRATION_SECONDS."""
    user = await login(request, body.username, body.password)
    lifetime = settings_of(request).jwt_expiration_seconds
    token = issue(user.username, key=key_of(request), now=utcnow(),
                  lifetime=timedelta(seconds=lifetime))
    return a.AccessToken(access_token=token, expires_in=lifetime)


@root_router.post("/auth/token", response_model=a.AccessToken, status_code=201,
                  openapi_extra=PUBLIC,
                  responses={401: {"description": "Wrong username or password"},
                             429: {"description": "Too many failed logins (see Retry-After)"}})
async def create_token_at_root(request: Request) -> a.AccessToken:
    """Airflow's token route: ``{"username", "password"}`` as JSON or a form, answering
    ``{"access_token": …}`` (the same login, throttling and audit as /api/v1/auth/token)."""
    from pydantic import ValidationError

    from statewright.api.errors import BadRequest, describe_validation

    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        from urllib.parse import parse_qs

        fields = parse_qs((await request.body()).decode(errors="replace"))
        data: Any = {k: v[0] for k, v in fields.items()}
    else:
        try:
            data = await request.json()
        except ValueError:
            raise BadRequest("Invalid request: send username and password as a JSON object "
                             "or a form.") from None
    try:
        body = a.LoginBody.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc.errors())) from None
    return await create_access_token(request, body)


@root_router.post("/auth/token/cli", response_model=a.AccessToken, status_code=201,
                  openapi_extra=PUBLIC,
                  responses={401: {"description": "Wrong username or password"},
                             429: {"description": "Too many failed logins (see Retry-After)"}})
async def create_cli_token(request: Request) -> a.AccessToken:
    """Where ``airflowctl auth login --username … --password …`` asks for its token: the same
    login, body and answer as ``POST /auth/token``."""
    return await create_token_at_root(request)


@router.get("/auth/me", response_model=a.Me, openapi_extra=AUTHENTICATED)
def me(request: Request) -> a.Me:
    """The user behind the credentials, the role and what it permits."""
    who = identity_of(request)
    return a.Me(username=who.username, role=who.role.value, via=who.via,  # type: ignore[arg-type]
                permissions=sorted(p.value for p in GRANTS[Role(who.role)]))


def _token(row: Any, username: str) -> dict[str, Any]:
    return dict(id=row.id, name=row.name, prefix=row.prefix, username=username,
                created_at=row.created_at, expires_at=row.expires_at,
                last_used_at=row.last_used_at, revoked_at=row.revoked_at)


@router.get("/auth/tokens", response_model=a.ApiTokenCollection, openapi_extra=AUTHENTICATED)
def list_tokens(request: Request) -> a.ApiTokenCollection:
    """One's own API tokens, newest first (the secrets are never shown again)."""
    who = identity_of(request)
    with reading(request) as conn:
        user = user_repo.get_user(conn, who.username)
        rows = user_repo.list_tokens(conn, user.id, "api") if user else []
    return a.ApiTokenCollection(tokens=[a.ApiToken(**_token(r, r.username)) for r in rows],
                                total_entries=len(rows))


@router.post("/auth/tokens", response_model=a.NewApiToken, status_code=201,
             openapi_extra=AUTHENTICATED)
def create_token(request: Request, body: a.ApiTokenBody) -> a.NewApiToken:
    """A long-lived API token for scripts: ``Authorization: Bearer swt_…``, valid
    ``expires_in_days`` (default STATEWRIGHT_API_TOKEN_DEFAULT_DAYS, 90). The secret is in this
    answer only."""
    who = identity_of(request)
    days = body.expires_in_days
    if days is None:
        days = settings_of(request).api_token_default_days
    secret, pk = accounts.create_token(
        engine_of(request), who.username, kind="api", name=body.name, now=utcnow(),
        lifetime=timedelta(days=days) if days else None)
    with reading(request) as conn:
        row = user_repo.get_token(conn, pk)
    return a.NewApiToken(**_token(row, row.username), token=secret)


@router.delete("/auth/tokens/{token_id}", response_model=a.ApiToken,
               openapi_extra=AUTHENTICATED,
               responses={404: {"description": "No such token of yours"}})
def revoke_token(request: Request,
                 token_id: Annotated[int, Path(ge=1, le=2**31 - 1)]) -> a.ApiToken:
    """Revoke an API token (one's own; an admin any): it stops working at once."""
    who = identity_of(request)
    try:
        accounts.revoke_token(engine_of(request), token_id, by=who, now=utcnow())
    except AccountError as exc:
        raise NotFound(str(exc)) from None
    with reading(request) as conn:
        row = user_repo.get_token(conn, token_id)
    return a.ApiToken(**_token(row, row.username))
