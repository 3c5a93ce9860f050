"""Bodies of the authentication, user and audit log routes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RoleName = Literal["viewer", "operator", "admin"]
Outcome = Literal["success", "denied", "failed", "error"]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(_Request):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1024)


class AccessToken(BaseModel):
    access_token: str
    token_type: Literal["bearer"] = "bearer"
    expires_in: int = Field(description="Seconds the token is accepted for.")


class Me(BaseModel):
    username: str
    role: RoleName
    via: Literal["jwt", "token", "session"]
    permissions: list[str]


class ApiTokenBody(_Request):
    name: str = Field(min_length=1, max_length=100, description="What the token is for.")
    expires_in_days: int | None = Field(
        default=None, ge=0, le=3650,
        description="Days it is valid (default: STATEWRIGHT_API_TOKEN_DEFAULT_DAYS, 90; 0: "
                    "until revoked).")


class ApiToken(BaseModel):
    id: int
    name: str
    prefix: str = Field(description="The first characters of the token, to recognise it.")
    username: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None


class NewApiToken(ApiToken):
    token: str = Field(description="The secret: shown this once, stored only hashed.")


class ApiTokenCollection(BaseModel):
    tokens: list[ApiToken]
    total_entries: int


class User(BaseModel):
    username: str
    role: RoleName
    created_at: datetime
    updated_at: datetime
    active: bool = Field(default=True, description="False for a deactivated user: it cannot "
                         "sign in until it is reactivated.")


class UserCollection(BaseModel):
    users: list[User]
    total_entries: int


class UserBody(_Request):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=8, max_length=1024)
    role: RoleName = "viewer"


class UserPatch(_Request):
    password: str | None = Field(default=None, min_length=8, max_length=1024)
    role: RoleName | None = None
    active: bool | None = Field(
        default=None, description="false deactivates the user (it cannot sign in; its JWTs, "
        "sessions and API tokens end at once); true reactivates it (its password works again).")
    revoke_api_tokens: bool = Field(
        default=False, description="Also revoke the user's API tokens (its JWTs and UI "
                                   "sessions end on any change of password or role).")


class EndSessionsBody(_Request):
    revoke_api_tokens: bool = Field(default=False,
                                    description="Also revoke the user's API tokens.")


class EndedSessions(BaseModel):
    username: str
    sessions_ended: int = Field(description="Web UI sessions ended (JWTs end with them).")
    api_tokens_revoked: int


class EventLog(BaseModel):
    event_log_id: int
    when: datetime
    owner: str | None = Field(description="The user, when the request had valid credentials.")
    event: str = Field(description="The action: the route's name, or auth.login, …")
    method: str
    path: str
    dag_id: str | None
    target: str | None
    outcome: Outcome
    status_code: int
    client_address: str | None
    detail: str | None


class EventLogCollection(BaseModel):
    event_logs: list[EventLog]
    total_entries: int
