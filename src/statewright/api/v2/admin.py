"""``/api/v2`` connections and variables (admin only, as in /api/v1) and pools (read: viewer;
create, change, delete: admin)."""

from __future__ import annotations

import json
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Offset
from statewright.api.errors import ApiError, Conflict, NotFound
from statewright.api.routers import pools as v1_pools
from statewright.api.routers import secrets as v1_secrets
from statewright.api.v2 import schemas_admin as v2
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, every, listed

connections = APIRouter(tags=["Connection"])
variables = APIRouter(tags=["Variable"])
pools = APIRouter(tags=["Pool"])


def _connection(c: v1_secrets.ConnectionOut) -> v2.Connection:
    return v2.Connection(connection_id=c.connection_id, conn_type=c.conn_type or "",
                         description=c.description, host=c.host, login=c.login,
                         schema=c.schema_, port=c.port, extra=c.extra,
                         password="***" if c.has_password else None)


@connections.get("/connections", response_model=v2.ConnectionCollection,
                 response_model_by_alias=True, openapi_extra=ADMIN)
def get_connections(request: Request, limit: PageLimit = 50, offset: Offset = 0,
                    order_by: OrderBy = None, connection_id_pattern: Pattern = None,
                    connection_id_prefix_pattern: Prefix = None) -> v2.ConnectionCollection:
    """Connections by id (passwords shown as ``***``)."""
    rows, total = listed(every(partial(v1_secrets.list_connections, request), "connections"),
                         lambda c: c.connection_id, connection_id_pattern,
                         connection_id_prefix_pattern, order_by, _CONNECTION_ORDER, limit,
                         offset)
    return v2.ConnectionCollection(connections=[_connection(c) for c in rows],
                                   total_entries=total)


_CONNECTION_ORDER = {"id": "connection_id", "conn_id": "connection_id",
                     "connection_id": "connection_id", "conn_type": "conn_type",
                     "description": "description", "host": "host", "port": "port"}


@connections.get("/connections/{connection_id}", response_model=v2.Connection,
                 response_model_by_alias=True, openapi_extra=ADMIN, responses=NOT_FOUND)
def get_connection(request: Request, connection_id: str) -> v2.Connection:
    """One connection."""
    return _connection(v1_secrets.get_connection(request, connection_id))


def _connection_in(body: v2.ConnectionBody) -> v1_secrets.ConnectionIn:
    return v1_secrets.ConnectionIn.model_validate(
        body.model_dump(by_alias=True, exclude={"team_name"}))


@connections.post("/connections", response_model=v2.Connection, status_code=201,
                  response_model_by_alias=True, openapi_extra=ADMIN, responses=CONFLICT)
def post_connection(request: Request, body: v2.ConnectionBody) -> v2.Connection:
    """Create a connection (409 when the id exists)."""
    return _connection(v1_secrets.post_connection(request, _connection_in(body)))


@connections.post("/connections/test", response_model=v1_secrets.ConnectionTestOut,
                  openapi_extra=ADMIN, responses={403: {"description": "Testing is off"}})
def test_connection(request: Request, body: v2.ConnectionBody) -> v1_secrets.ConnectionTestOut:
    """Test a connection given in full, not stored (off unless
    ``STATEWRIGHT_TEST_CONNECTION=Enabled``; the same checks as ``/api/v1``)."""
    return v1_secrets.post_connection_test(request, _connection_in(body))


@connections.post("/connections/defaults", status_code=204, openapi_extra=ADMIN,
                  include_in_schema=False)
def create_default_connections(request: Request) -> Response:
    """Airflow creates its list of default connections (``airflow_db``, ``aws_default``, …);
    statewright has no such list, so nothing is created: 400 saying so (not served in the
    OpenAPI document; docs/api.md lists it)."""
    raise ApiError("statewright has no list of default connections to create (Airflow's "
                   "airflow_db, aws_default, … are not kept); create each connection you need "
                   "with POST /api/v2/connections. Nothing was created.")


@connections.patch("/connections/{connection_id}", response_model=v2.Connection,
                   response_model_by_alias=True, openapi_extra=ADMIN, responses=NOT_FOUND)
def patch_connection(request: Request, connection_id: str, body: v2.ConnectionBody,
                     update_mask: Annotated[list[str] | None, Query()] = None
                     ) -> v2.Connection:
    """Change a connection (only the fields in ``update_mask`` when given; a password left
    out keeps the stored one)."""
    return _connection(v1_secrets.patch_connection(request, connection_id,
                                                   _connection_in(body), update_mask))


@connections.delete("/connections/{connection_id}", status_code=204, openapi_extra=ADMIN,
                    responses=NOT_FOUND)
def delete_connection(request: Request, connection_id: str) -> Response:
    """Delete a connection."""
    return v1_secrets.delete_connection(request, connection_id)


def variable_in(body: v2.VariableBody) -> v1_secrets.VariableIn:
    value = body.value if isinstance(body.value, str) else json.dumps(body.value)
    return v1_secrets.VariableIn(key=body.key, value=value, description=body.description)


@variables.post("/variables", response_model=v2.Variable, status_code=201,
                openapi_extra=ADMIN, responses=CONFLICT)
def post_variable(request: Request, body: v2.VariableBody) -> v2.Variable:
    """Create a variable (409 when the key exists; a JSON value is stored as its text)."""
    try:
        v1_secrets.get_variable(request, body.key)
    except NotFound:
        return _variable(v1_secrets.post_variable(request, variable_in(body)))
    raise Conflict(f"The Variable with key: `{body.key}` already exists")


@variables.patch("/variables/{variable_key}", response_model=v2.Variable,
                 openapi_extra=ADMIN, responses=NOT_FOUND)
def patch_variable(request: Request, variable_key: str, body: v2.VariableBody,
                   update_mask: Annotated[list[str] | None, Query()] = None) -> v2.Variable:
    """Change a variable's value and description (``update_mask``: only these)."""
    new = variable_in(body)
    if update_mask:
        current = v1_secrets.get_variable(request, variable_key)
        new.value = new.value if "value" in update_mask else current.value or ""
        if "description" not in update_mask:
            new.description = current.description
    return _variable(v1_secrets.patch_variable(request, variable_key, new))


@variables.delete("/variables/{variable_key}", status_code=204, openapi_extra=ADMIN,
                  responses=NOT_FOUND)
def delete_variable(request: Request, variable_key: str) -> Response:
    """Delete a variable."""
    return v1_secrets.delete_variable(request, variable_key)


def _variable(v: v1_secrets.VariableOut) -> v2.Variable:
    return v2.Variable(key=v.key, value=v.value, description=v.description, is_encrypted=True)


@variables.get("/variables", response_model=v2.VariableCollection, openapi_extra=ADMIN)
def get_variables(request: Request, limit: PageLimit = 50, offset: Offset = 0,
                  order_by: OrderBy = None, variable_key_pattern: Pattern = None,
                  variable_key_prefix_pattern: Prefix = None) -> v2.VariableCollection:
    """Variables by key; sensitive values are shown as ``***``."""
    rows, total = listed(every(partial(v1_secrets.list_variables, request), "variables"),
                         lambda v: v.key, variable_key_pattern, variable_key_prefix_pattern,
                         order_by, _VARIABLE_ORDER, limit, offset)
    return v2.VariableCollection(variables=[_variable(v) for v in rows], total_entries=total)


_VARIABLE_ORDER = {"id": "key", "key": "key", "_val": "value", "description": "description"}


@variables.get("/variables/{variable_key}", response_model=v2.Variable, openapi_extra=ADMIN,
               responses=NOT_FOUND)
def get_variable(request: Request, variable_key: str) -> v2.Variable:
    """One variable."""
    return _variable(v1_secrets.get_variable(request, variable_key))


def _pool(p: v1_pools.PoolResponse) -> v2.Pool:
    return v2.Pool(**p.model_dump())


@pools.get("/pools", response_model=v2.PoolCollection)
def get_pools(request: Request, limit: PageLimit = 50, offset: Offset = 0,
              order_by: OrderBy = None, pool_name_pattern: Pattern = None,
              pool_name_prefix_pattern: Prefix = None) -> v2.PoolCollection:
    """Pools with their occupancy."""
    rows, total = listed(every(partial(v1_pools.list_pools, request), "pools"),
                         lambda p: p.name, pool_name_pattern, pool_name_prefix_pattern,
                         order_by, {"id": "name", "pool": "name", "name": "name"}, limit,
                         offset)
    return v2.PoolCollection(pools=[_pool(p) for p in rows], total_entries=total)


@pools.get("/pools/{pool_name}", response_model=v2.Pool, responses=NOT_FOUND)
def get_pool(request: Request, pool_name: str) -> v2.Pool:
    """One pool."""
    return _pool(v1_pools.get_pool(request, pool_name))


def _slots(slots: int) -> int:
    if slots < 0:
        raise ApiError("Invalid request: unlimited slots (-1) are not supported; give a "
                         "number of slots. Nothing was changed.")
    return slots


@pools.post("/pools", response_model=v2.Pool, status_code=201, openapi_extra=ADMIN,
            responses=CONFLICT)
def post_pool(request: Request, body: v2.PoolBody) -> v2.Pool:
    """Create a pool (409 when one of that name exists)."""
    return _pool(v1_pools.create_pool(request, v1_pools.PoolBody(
        name=body.name, slots=_slots(body.slots), description=body.description,
        include_deferred=body.include_deferred)))


@pools.patch("/pools/{pool_name}", response_model=v2.Pool, openapi_extra=ADMIN,
             responses=NOT_FOUND)
def patch_pool(request: Request, pool_name: str, body: v2.PoolPatchBody,
               update_mask: Annotated[list[str] | None, Query()] = None) -> v2.Pool:
    """Change a pool's slots, description or include_deferred (``update_mask``: only these)."""
    given = body.model_fields_set - {"pool", "team_name"}
    if update_mask:
        given &= set(update_mask)
    fields = {k: getattr(body, k) for k in given}
    if body.pool is not None and body.pool != pool_name:
        raise ApiError("Invalid request: a pool cannot be renamed. Nothing was changed.")
    if "slots" in fields:
        _slots(fields["slots"])
    return _pool(v1_pools.patch_pool(request, pool_name, v1_pools.PoolPatchBody(**fields)))


@pools.delete("/pools/{pool_name}", status_code=204, openapi_extra=ADMIN, responses=NOT_FOUND)
def delete_pool(request: Request, pool_name: str) -> Response:
    """Delete a pool (not default_pool)."""
    return v1_pools.delete_pool(request, pool_name)
