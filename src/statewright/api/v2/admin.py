"""``/api/v2`` connections and variables (read; admin only, as in /api/v1) and pools (read:
viewer; create, change, delete: admin)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Offset
from statewright.api.errors import BadRequest
from statewright.api.routers import pools as v1_pools
from statewright.api.routers import secrets as v1_secrets
from statewright.api.v2 import schemas_admin as v2
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit

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
def get_connections(request: Request, limit: PageLimit = 50, offset: Offset = 0
                    ) -> v2.ConnectionCollection:
    """Connections by id (passwords shown as ``***``)."""
    page = v1_secrets.list_connections(request, limit=limit, offset=offset)
    return v2.ConnectionCollection(connections=[_connection(c) for c in page.connections],
                                   total_entries=page.total_entries)


@connections.get("/connections/{connection_id}", response_model=v2.Connection,
                 response_model_by_alias=True, openapi_extra=ADMIN, responses=NOT_FOUND)
def get_connection(request: Request, connection_id: str) -> v2.Connection:
    """One connection."""
    return _connection(v1_secrets.get_connection(request, connection_id))


def _variable(v: v1_secrets.VariableOut) -> v2.Variable:
    return v2.Variable(key=v.key, value=v.value, description=v.description, is_encrypted=True)


@variables.get("/variables", response_model=v2.VariableCollection, openapi_extra=ADMIN)
def get_variables(request: Request, limit: PageLimit = 50, offset: Offset = 0
                  ) -> v2.VariableCollection:
    """Variables by key; sensitive values are shown as ``***``."""
    page = v1_secrets.list_variables(request, limit=limit, offset=offset)
    return v2.VariableCollection(variables=[_variable(v) for v in page.variables],
                                 total_entries=page.total_entries)


@variables.get("/variables/{variable_key}", response_model=v2.Variable, openapi_extra=ADMIN,
               responses=NOT_FOUND)
def get_variable(request: Request, variable_key: str) -> v2.Variable:
    """One variable."""
    return _variable(v1_secrets.get_variable(request, variable_key))


def _pool(p: v1_pools.PoolResponse) -> v2.Pool:
    return v2.Pool(**p.model_dump())


@pools.get("/pools", response_model=v2.PoolCollection)
def get_pools(request: Request, limit: PageLimit = 50, offset: Offset = 0
              ) -> v2.PoolCollection:
    """Pools with their occupancy."""
    page = v1_pools.list_pools(request, limit=limit, offset=offset)
    return v2.PoolCollection(pools=[_pool(p) for p in page.pools],
                             total_entries=page.total_entries)


@pools.get("/pools/{pool_name}", response_model=v2.Pool, responses=NOT_FOUND)
def get_pool(request: Request, pool_name: str) -> v2.Pool:
    """One pool."""
    return _pool(v1_pools.get_pool(request, pool_name))


def _slots(slots: int) -> int:
    if slots < 0:
        raise BadRequest("Invalid request: unlimited slots (-1) are not supported; give a "
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
        raise BadRequest("Invalid request: a pool cannot be renamed. Nothing was changed.")
    if "slots" in fields:
        _slots(fields["slots"])
    return _pool(v1_pools.patch_pool(request, pool_name, v1_pools.PoolPatchBody(**fields)))


@pools.delete("/pools/{pool_name}", status_code=204, openapi_extra=ADMIN, responses=NOT_FOUND)
def delete_pool(request: Request, pool_name: str) -> Response:
    """Delete a pool (not default_pool)."""
    return v1_pools.delete_pool(request, pool_name)
