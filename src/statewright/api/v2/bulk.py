"""``PATCH /api/v2/connections``, ``/variables``, ``/pools``: Airflow's bulk actions (create,
update, delete, each with what to do when an entity exists or not), each entity going through
the same route function as one ``POST``/``PATCH``/``DELETE`` (admin only). An action's errors
are in the answer (``BulkResponse``), as Airflow's: with ``fail``, an action that finds an
entity existing (create) or missing (update, delete) changes nothing of it; another error stops
the action at that entity, the ones before it are kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Generic, Literal, TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from statewright.api.auth.permissions import ADMIN
from statewright.api.errors import ApiError, NotFound
from statewright.api.routers import secrets as v1_secrets
from statewright.api.v2 import admin
from statewright.api.v2 import schemas_admin as v2

E = TypeVar("E", bound=BaseModel)

router = APIRouter()


class BulkCreateAction(BaseModel, Generic[E]):
    model_config = ConfigDict(extra="forbid")
    action: Literal["create"]
    entities: list[E]
    action_on_existence: Literal["fail", "skip", "overwrite"] = "fail"


class BulkUpdateAction(BaseModel, Generic[E]):
    model_config = ConfigDict(extra="forbid")
    action: Literal["update"]
    entities: list[E]
    update_mask: list[str] | None = None
    action_on_non_existence: Literal["fail", "skip"] = "fail"


class BulkDeleteAction(BaseModel, Generic[E]):
    model_config = ConfigDict(extra="forbid")
    action: Literal["delete"]
    entities: list[str | E]
    action_on_non_existence: Literal["fail", "skip"] = "fail"


class BulkBody(BaseModel, Generic[E]):
    model_config = ConfigDict(extra="forbid")
    actions: list[Annotated[BulkCreateAction[E] | BulkUpdateAction[E] | BulkDeleteAction[E],
                            Field(discriminator="action")]]


class BulkActionResponse(BaseModel):
    success: list[str] = []
    errors: list[dict[str, Any]] = []


class BulkResponse(BaseModel):
    create: BulkActionResponse | None = None
    update: BulkActionResponse | None = None
    delete: BulkActionResponse | None = None


@dataclass(frozen=True)
class Resource(Generic[E]):
    """How one kind of entity is found, created, changed and deleted (by the routes' own
    functions) and how Airflow names it in a bulk error."""
    plural: str
    key_name: str
    key: Callable[[E], str]
    exists: Callable[[Request, str], bool]
    create: Callable[[Request, E, bool], object]
    update: Callable[[Request, E, list[str] | None], object]
    delete: Callable[[Request, str], object]


def _found(get: Callable[[Request, str], object]) -> Callable[[Request, str], bool]:
    def exists(request: Request, key: str) -> bool:
        try:
            get(request, key)
        except NotFound:
            return False
        return True
    return exists


def _error(detail: str, status: int) -> dict[str, Any]:
    return {"error": detail, "status_code": status}


def _keys(keys: list[str]) -> str:
    return "{" + ", ".join(repr(k) for k in sorted(set(keys))) + "}"


def _chosen(res: Resource[E], request: Request, keys: list[str], on_fail: str | None,
            want_existing: bool, policy: str, out: BulkActionResponse) -> set[str] | None:
    """The keys the action goes on with, or None when ``fail`` refuses it."""
    found = {k for k in keys if res.exists(request, k)}
    bad = [k for k in keys if (k in found) != want_existing]
    if bad and policy == "fail":
        out.errors.append(_error(f"The {res.plural} with these {res.key_name}s: {_keys(bad)} "
                                 f"{on_fail}.", 409 if not want_existing else 404))
        return None
    if policy == "skip":
        return {k for k in keys if k not in bad}
    return set(keys)


def _run(res: Resource[E], request: Request, action: Any, out: BulkActionResponse) -> None:
    if isinstance(action, BulkDeleteAction):
        keys = [e if isinstance(e, str) else res.key(e) for e in action.entities]
        chosen = _chosen(res, request, keys, "were not found", True,
                         action.action_on_non_existence, out)
        work: list[tuple[str, Callable[[], object]]] = [
            (k, partial(res.delete, request, k)) for k in keys]
    elif isinstance(action, BulkUpdateAction):
        keys = [res.key(e) for e in action.entities]
        chosen = _chosen(res, request, keys, "were not found", True,
                         action.action_on_non_existence, out)
        work = [(res.key(e), partial(res.update, request, e, action.update_mask))
                for e in action.entities]
    else:
        keys = [res.key(e) for e in action.entities]
        chosen = _chosen(res, request, keys, "already exist", False,
                         action.action_on_existence, out)
        overwrite = action.action_on_existence == "overwrite"
        work = [(res.key(e), partial(res.create, request, e, overwrite))
                for e in action.entities]
    if chosen is None:
        return
    for key, do in work:
        if key not in chosen:
            continue
        try:
            do()
        except ApiError as exc:
            out.errors.append(_error(exc.detail, exc.status_code))
            return
        out.success.append(key)


def handle(res: Resource[E], request: Request, body: BulkBody[E]) -> BulkResponse:
    results: dict[str, BulkActionResponse] = {}
    for action in body.actions:
        _run(res, request, action, results.setdefault(action.action, BulkActionResponse()))
    return BulkResponse(**results)


def _create_connection(request: Request, e: v2.ConnectionBody, overwrite: bool) -> object:
    if overwrite and CONNECTIONS.exists(request, e.connection_id):
        return admin.patch_connection(request, e.connection_id, e, None)
    return admin.post_connection(request, e)


CONNECTIONS: Resource[v2.ConnectionBody] = Resource(
    "connections", "connection_id", lambda e: e.connection_id,
    _found(v1_secrets.get_connection), _create_connection,
    lambda r, e, mask: admin.patch_connection(r, e.connection_id, e, mask),
    admin.delete_connection)

VARIABLES: Resource[v2.VariableBody] = Resource(
    "variables", "key", lambda e: e.key, _found(v1_secrets.get_variable),
    lambda r, e, _overwrite: v1_secrets.post_variable(r, admin.variable_in(e)),
    lambda r, e, mask: admin.patch_variable(r, e.key, e, mask), admin.delete_variable)


def _pool_patch(e: v2.PoolBody) -> v2.PoolPatchBody:
    return v2.PoolPatchBody(slots=e.slots, description=e.description,
                            include_deferred=e.include_deferred)


def _create_pool(request: Request, e: v2.PoolBody, overwrite: bool) -> object:
    if overwrite and POOLS.exists(request, e.name):
        return admin.patch_pool(request, e.name, _pool_patch(e), None)
    return admin.post_pool(request, e)


POOLS: Resource[v2.PoolBody] = Resource(
    "pools", "pool name", lambda e: e.name, _found(admin.get_pool), _create_pool,
    lambda r, e, mask: admin.patch_pool(r, e.name, _pool_patch(e), mask), admin.delete_pool)


@router.patch("/connections", response_model=BulkResponse, openapi_extra=ADMIN,
              tags=["Connection"])
def bulk_connections(request: Request, body: BulkBody[v2.ConnectionBody]) -> BulkResponse:
    """Create, change and delete connections in one request."""
    return handle(CONNECTIONS, request, body)


@router.patch("/variables", response_model=BulkResponse, openapi_extra=ADMIN,
              tags=["Variable"])
def bulk_variables(request: Request, body: BulkBody[v2.VariableBody]) -> BulkResponse:
    """Create (or replace), change and delete variables in one request."""
    return handle(VARIABLES, request, body)


@router.patch("/pools", response_model=BulkResponse, openapi_extra=ADMIN, tags=["Pool"])
def bulk_pools(request: Request, body: BulkBody[v2.PoolBody]) -> BulkResponse:
    """Create, change and delete pools in one request (``default_pool`` is not deleted)."""
    return handle(POOLS, request, body)
