"""Connections and variables, in the shapes of Airflow's REST API. A password is accepted
on create and update and never returned; sensitive extra fields and sensitive variables are
shown as ``***``."""

from __future__ import annotations

from typing import Annotated, Any

from cryptography.fernet import MultiFernet
from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from statewright.api.deps import Limit, Offset, engine_of, settings_of
from statewright.api.errors import ApiError, BadRequest, Conflict, NotFound
from statewright.sdk.connection import Connection, InvalidConnection
from statewright.services.secrets.admin import (
    SecretsAdmin,
    public_connection,
    public_variable,
    test_connection,
)

router = APIRouter(tags=["Connections and variables"])


class ConnectionOut(BaseModel):
    connection_id: str
    conn_type: str | None
    description: str | None = None
    host: str | None = None
    login: str | None = None
    schema_: str | None = Field(None, alias="schema")
    port: int | None = None
    extra: str | None = Field(None, description="JSON text; sensitive fields are masked.")
    has_password: bool = False

    model_config = {"populate_by_name": True}


class ConnectionCollection(BaseModel):
    connections: list[ConnectionOut]
    total_entries: int


class ConnectionIn(BaseModel):
    connection_id: str = Field(min_length=1, max_length=250)
    conn_type: str = Field(min_length=1)
    description: str | None = None
    host: str | None = None
    login: str | None = None
    schema_: str | None = Field(None, alias="schema")
    port: int | None = None
    password: str | None = Field(None, description="Write-only: never returned.")
    extra: str | None = Field(None, description="A JSON object, as text.")

    model_config = {"populate_by_name": True}


class ConnectionTestOut(BaseModel):
    status: bool
    message: str


class VariableOut(BaseModel):
    key: str
    value: str | None
    description: str | None = None


class VariableCollection(BaseModel):
    variables: list[VariableOut]
    total_entries: int


class VariableIn(BaseModel):
    key: str = Field(min_length=1, max_length=250)
    value: str
    description: str | None = None


def cipher_of(request: Request) -> MultiFernet:
    """The Fernet cipher of this API server: the one installed in the process, else the one
    of the app's settings (loaded once)."""
    from statewright.services.worker.deferral import installed_cipher, load_cipher

    cipher = installed_cipher() or getattr(request.app.state, "secrets_cipher", None)
    if cipher is None:
        cipher = load_cipher(settings_of(request))
        request.app.state.secrets_cipher = cipher
    return cipher


def _admin(request: Request) -> SecretsAdmin:
    cipher = cipher_of(request)
    return SecretsAdmin(engine_of(request), lambda: cipher)


def _connection(body: ConnectionIn, conn_id: str | None = None) -> Connection:
    try:
        return Connection(conn_id=conn_id or body.connection_id, conn_type=body.conn_type,
                          description=body.description, host=body.host, login=body.login,
                          schema=body.schema_, port=body.port, password=body.password,
                          extra=body.extra)
    except InvalidConnection as exc:
        raise BadRequest(str(exc)) from None


def _out(conn: Connection) -> ConnectionOut:
    return ConnectionOut.model_validate(public_connection(conn))


@router.get("/connections", response_model=ConnectionCollection, response_model_by_alias=True)
def list_connections(request: Request, limit: Limit = 100,
                     offset: Offset = 0) -> ConnectionCollection:
    """Connections by id (no passwords)."""
    admin = _admin(request)
    rows = admin.list_connections(limit=limit, offset=offset)
    return ConnectionCollection(connections=[_out(c) for c in rows],
                                total_entries=admin.count_connections())


@router.get("/connections/{connection_id}", response_model=ConnectionOut,
            response_model_by_alias=True)
def get_connection(request: Request, connection_id: str) -> ConnectionOut:
    conn = _admin(request).get_connection(connection_id)
    if conn is None:
        raise NotFound(f"The Connection with connection_id: `{connection_id}` was not found")
    return _out(conn)


@router.post("/connections", response_model=ConnectionOut, status_code=200,
             response_model_by_alias=True)
def post_connection(request: Request, body: ConnectionIn) -> ConnectionOut:
    """Create a connection; an existing id is a conflict."""
    conn = _connection(body)
    try:
        _admin(request).add_connection(conn)
    except KeyError:
        raise Conflict(f"Connection already exist. ID: {body.connection_id}") from None
    return _out(conn)


@router.patch("/connections/{connection_id}", response_model=ConnectionOut,
              response_model_by_alias=True)
def patch_connection(request: Request, connection_id: str, body: ConnectionIn,
                     update_mask: Annotated[list[str] | None, Query()] = None) -> ConnectionOut:
    """Replace a connection's fields (only those in ``update_mask`` when given). A password
    left out (null) keeps the stored one."""
    admin = _admin(request)
    current = admin.get_connection(connection_id)
    if current is None:
        raise NotFound(f"The Connection with connection_id: `{connection_id}` was not found")
    if body.connection_id != connection_id:
        raise BadRequest("The connection_id cannot be updated.")
    new = _connection(body, connection_id)
    fields = ("conn_type", "description", "host", "login", "schema", "port", "password",
              "extra")
    for name in fields:
        if update_mask and name not in update_mask:
            setattr(new, name, getattr(current, name))
    if new.password is None:
        new.password = current.password
    admin.add_connection(new, overwrite=True)
    return _out(new)


@router.delete("/connections/{connection_id}", status_code=204)
def delete_connection(request: Request, connection_id: str) -> Response:
    if not _admin(request).delete_connection(connection_id):
        raise NotFound(f"The Connection with connection_id: `{connection_id}` was not found")
    return Response(status_code=204)


class _Disabled(ApiError):
    status_code = 403


_TEST_DISABLED = ("Testing connections is disabled: a test reaches, from the server, whatever "
                  "host it is given. An admin turns it on with STATEWRIGHT_TEST_CONNECTION="
                  "Enabled (Airflow's [core] test_connection).")
_TARGET = ("conn_type", "host", "port", "schema")


@router.post("/connections/test", response_model=ConnectionTestOut,
             responses={403: {"description": "Testing connections is disabled (the default)"},
                        400: {"description": "No password given for another target than the "
                                             "stored connection's"}})
def post_connection_test(request: Request, body: ConnectionIn) -> ConnectionTestOut:
    """Test a connection given in full (not stored). Off unless ``STATEWRIGHT_TEST_CONNECTION``
    is ``Enabled``. An empty password takes the stored one only when the test goes where the
    stored connection goes (same type, host, port and schema); a test elsewhere must carry its
    own. A SQLite database is opened read-only and never created."""
    if not settings_of(request).test_connection:
        raise _Disabled(_TEST_DISABLED)
    conn = _connection(body)
    if conn.password is None:
        stored = _admin(request).get_connection(body.connection_id)
        if stored is not None and stored.password:
            moved = [f for f in _TARGET if getattr(stored, f) != getattr(conn, f)]
            if moved:
                raise ApiError(
                    f"Connection {body.connection_id!r}: the test goes to another {moved[0]} "
                    "than the stored connection's, so it must carry its own password (the "
                    "stored one is sent only where it is stored for). Nothing was sent.")
            conn.password = stored.password
    ok, message = test_connection(conn)
    return ConnectionTestOut(status=ok, message=message)


def _var_out(record: Any) -> VariableOut:
    data = public_variable(record)
    return VariableOut(key=data["key"], value=data["value"], description=data["description"])


@router.get("/variables", response_model=VariableCollection)
def list_variables(request: Request, limit: Limit = 100,
                   offset: Offset = 0) -> VariableCollection:
    """Variables by key; sensitive values are shown as ``***``."""
    admin = _admin(request)
    return VariableCollection(
        variables=[_var_out(v) for v in admin.list_variables(limit=limit, offset=offset)],
        total_entries=admin.count_variables())


@router.get("/variables/{variable_key}", response_model=VariableOut)
def get_variable(request: Request, variable_key: str) -> VariableOut:
    record = _admin(request).get_variable(variable_key)
    if record is None:
        raise NotFound(f"Variable not found: {variable_key}")
    return _var_out(record)


@router.post("/variables", response_model=VariableOut)
def post_variable(request: Request, body: VariableIn) -> VariableOut:
    """Create or replace a variable."""
    admin = _admin(request)
    admin.set_variable(body.key, body.value, body.description)
    return _var_out(admin.get_variable(body.key))


@router.patch("/variables/{variable_key}", response_model=VariableOut)
def patch_variable(request: Request, variable_key: str, body: VariableIn) -> VariableOut:
    admin = _admin(request)
    if body.key != variable_key:
        raise BadRequest("Invalid body, key from request body doesn't match uri parameter")
    if admin.get_variable(variable_key) is None:
        raise NotFound(f"Variable not found: {variable_key}")
    admin.set_variable(body.key, body.value, body.description)
    return _var_out(admin.get_variable(variable_key))


@router.delete("/variables/{variable_key}", status_code=204)
def delete_variable(request: Request, variable_key: str) -> Response:
    if not _admin(request).delete_variable(variable_key):
        raise NotFound(f"Variable not found: {variable_key}")
    return Response(status_code=204)
