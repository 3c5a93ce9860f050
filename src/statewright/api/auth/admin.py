"""Admin routes: users (create, list, change, delete) and the audit log (``eventLogs``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from statewright.api.auth import schemas as a
from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Limit, Offset, engine_of, reading
from statewright.api.errors import BadRequest, Conflict, NotFound
from statewright.core.clock import utcnow
from statewright.db.repositories import audit as audit_repo
from statewright.db.repositories import users as user_repo
from statewright.services.auth import accounts
from statewright.services.auth.accounts import AccountError, LastAdmin, UserExists, UserNotFound

router = APIRouter()


def _user(row: Any) -> a.User:
    return a.User(username=row.username, role=row.role, created_at=row.created_at,
                  updated_at=row.updated_at, active=accounts.is_active(row))


def _raise(exc: AccountError) -> None:
    if isinstance(exc, UserNotFound):
        raise NotFound(str(exc)) from None
    if isinstance(exc, UserExists | LastAdmin):
        raise Conflict(str(exc)) from None
    raise BadRequest(str(exc)) from None


@router.get("/users", response_model=a.UserCollection, tags=["Users"], openapi_extra=ADMIN)
def list_users(request: Request) -> a.UserCollection:
    """Every user and role (never a password)."""
    rows = accounts.list_users(engine_of(request))
    return a.UserCollection(users=[_user(r) for r in rows], total_entries=len(rows))


@router.post("/users", response_model=a.User, status_code=201, tags=["Users"],
             openapi_extra=ADMIN, responses={409: {"description": "The username is taken"}})
def create_user(request: Request, body: a.UserBody) -> a.User:
    """A new user with a password (argon2id-hashed) and a role."""
    try:
        accounts.create_user(engine_of(request), body.username, body.password, body.role,
                             utcnow())
    except AccountError as exc:
        _raise(exc)
    with reading(request) as conn:
        return _user(user_repo.get_user(conn, body.username))


@router.patch("/users/{username}", response_model=a.User, tags=["Users"], openapi_extra=ADMIN,
              responses={404: {"description": "No such user"},
                         409: {"description": "It would leave no admin"}})
def patch_user(request: Request, username: str, body: a.UserPatch) -> a.User:
    """A new password and/or a new role: the user's JWTs and web UI sessions end (its API
    tokens too with ``revoke_api_tokens``); ``active: false`` deactivates the user (no sign-in;
    every JWT, session and API token ends), ``true`` reactivates it."""
    if body.password is None and body.role is None and body.active is None:
        raise BadRequest("Invalid request: give a password, a role or active. Nothing was "
                         "changed.")
    revoke = body.revoke_api_tokens
    try:
        if body.role is not None:
            accounts.set_role(engine_of(request), username, body.role, utcnow(),
                              revoke_api_tokens=revoke)
        if body.password is not None:
            accounts.set_password(engine_of(request), username, body.password, utcnow(),
                                  revoke_api_tokens=revoke)
        if body.active is not None:  # last: a new password alone would reactivate the user
            accounts.set_active(engine_of(request), username, body.active, utcnow())
    except AccountError as exc:
        _raise(exc)
    with reading(request) as conn:
        return _user(user_repo.get_user(conn, username))


@router.delete("/users/{username}", response_model=a.User, tags=["Users"], openapi_extra=ADMIN,
               responses={404: {"description": "No such user"},
                          409: {"description": "The only admin"}})
def delete_user(request: Request, username: str) -> a.User:
    """Delete a user with its tokens and sessions."""
    with reading(request) as conn:
        row = user_repo.get_user(conn, username)
    try:
        accounts.delete_user(engine_of(request), username)
    except AccountError as exc:
        _raise(exc)
    return _user(row)


@router.post("/users/{username}/endSessions", response_model=a.EndedSessions, tags=["Users"],
             openapi_extra=ADMIN, responses={404: {"description": "No such user"}})
def end_sessions(request: Request, username: str, body: a.EndSessionsBody) -> a.EndedSessions:
    """Sign the user out everywhere: its JWTs and web UI sessions stop working at once (its
    API tokens too with ``revoke_api_tokens``)."""
    try:
        sessions, tokens = accounts.end_sign_ins(engine_of(request), username, utcnow(),
                                                 api_tokens=body.revoke_api_tokens)
    except AccountError as exc:
        _raise(exc)
    return a.EndedSessions(username=username, sessions_ended=sessions,
                           api_tokens_revoked=tokens)


@router.get("/users/{username}/tokens", response_model=a.ApiTokenCollection, tags=["Users"],
            openapi_extra=ADMIN, responses={404: {"description": "No such user"}})
def user_tokens(request: Request, username: str) -> a.ApiTokenCollection:
    """The user's API tokens, newest first (revoke one with DELETE /auth/tokens/{id})."""
    try:
        rows = accounts.tokens_of(engine_of(request), username)
    except AccountError as exc:
        _raise(exc)
    return a.ApiTokenCollection(tokens=[a.ApiToken(**token_fields(r)) for r in rows],
                                total_entries=len(rows))


def token_fields(row: Any) -> dict[str, Any]:
    return dict(id=row.id, name=row.name, prefix=row.prefix, username=row.username,
                created_at=row.created_at, expires_at=row.expires_at,
                last_used_at=row.last_used_at, revoked_at=row.revoked_at)


def event_logs(request: Request, *, limit: int, offset: int, dag_id: str | None,
               owner: str | None, event: str | None, outcome: str | None
               ) -> a.EventLogCollection:
    with reading(request) as conn:
        rows, total = audit_repo.page(conn, limit=limit, offset=offset, dag_id=dag_id,
                                      username=owner, action=event, outcome=outcome)
    return a.EventLogCollection(total_entries=total, event_logs=[a.EventLog(
        event_log_id=r.id, when=r.at, owner=r.username, event=r.action, method=r.method,
        path=r.path, dag_id=r.dag_id, target=r.target, outcome=r.outcome,
        status_code=r.status_code, client_address=r.client_address, detail=r.detail)
        for r in rows])


@router.get("/eventLogs", response_model=a.EventLogCollection, tags=["Event logs"],
            openapi_extra=ADMIN)
def list_event_logs(
    request: Request,
    limit: Limit = 100,
    offset: Offset = 0,
    dag_id: Annotated[str | None, Query(description="Only actions on this DAG.")] = None,
    owner: Annotated[str | None, Query(description="Only actions of this user.")] = None,
    event: Annotated[str | None, Query(description="Only this action, e.g. auth.login.")] = None,
    outcome: Annotated[a.Outcome | None, Query(description="success, denied, failed, error"
                                               )] = None,
) -> a.EventLogCollection:
    """The audit log, newest first: every API action (who, what, target, when, outcome, client
    address), refused requests and logins. Append-only."""
    return event_logs(request, limit=limit, offset=offset, dag_id=dag_id, owner=owner,
                      event=event, outcome=outcome)
