"""Pools, in the shapes of Airflow 3's REST API (``/pools``), each with its occupancy: the
slots its task instances take by state and the slots still open. Writes need the admin role
and call the same service as ``statewright pools``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from statewright.api.deps import Limit, Offset, engine_of, reading, settings_of, writing
from statewright.api.errors import ApiError, Conflict, NotFound
from statewright.db.repositories import pools as pool_repo
from statewright.services import pools as service

router = APIRouter(tags=["Pool"])
MAX_SLOTS = 2**31 - 1  # the column is a 32-bit integer


class PoolResponse(BaseModel):
    name: str
    slots: int
    description: str | None
    include_deferred: bool
    occupied_slots: int = Field(description="running + queued (+ deferred when included)")
    running_slots: int
    queued_slots: int
    scheduled_slots: int
    deferred_slots: int
    open_slots: int = Field(description="slots - occupied_slots (negative when the pool was "
                                        "made smaller than what it holds)")


class PoolCollection(BaseModel):
    pools: list[PoolResponse]
    total_entries: int


class PoolBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=256)
    slots: int = Field(ge=0, le=MAX_SLOTS)
    description: str | None = None
    include_deferred: bool = False


class PoolPatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slots: int | None = Field(None, ge=0, le=MAX_SLOTS)
    description: str | None = None
    include_deferred: bool | None = None


def _out(s: pool_repo.PoolStats) -> PoolResponse:
    return PoolResponse(name=s.name, slots=s.slots, description=s.description,
                        include_deferred=s.include_deferred, occupied_slots=s.occupied,
                        running_slots=s.running, queued_slots=s.queued,
                        scheduled_slots=s.scheduled, deferred_slots=s.deferred,
                        open_slots=s.open)


def _one(request: Request, name: str) -> PoolResponse:
    with reading(request) as conn:
        stats = pool_repo.slot_stats(conn).get(name)
    if stats is None:
        raise NotFound(f"No pool named {name!r}; GET /api/v1/pools lists them.")
    return _out(stats)


@router.get("/pools", response_model=PoolCollection)
def list_pools(request: Request, limit: Limit = 100, offset: Offset = 0) -> PoolCollection:
    """Pools by name, with their occupancy (``default_pool`` is created when missing)."""
    with reading(request) as conn:
        stats = pool_repo.slot_stats(conn)
    if pool_repo.DEFAULT_POOL not in stats:  # a write only when it is missing
        with writing(request) as conn:
            pool_repo.ensure_default(conn, settings_of(request).default_pool_slots)
            stats = pool_repo.slot_stats(conn)
    listed = list(stats.values())
    return PoolCollection(pools=[_out(s) for s in listed[offset:offset + limit]],
                          total_entries=len(listed))


@router.get("/pools/{pool_name}", response_model=PoolResponse)
def get_pool(request: Request, pool_name: str) -> PoolResponse:
    return _one(request, pool_name)


@router.post("/pools", response_model=PoolResponse, status_code=201,
             responses={409: {"description": "A pool of that name exists"}})
def create_pool(request: Request, body: PoolBody) -> PoolResponse:
    """Create a pool (409 when one of that name exists: change it with PATCH)."""
    with reading(request) as conn:
        if pool_repo.get(conn, body.name) is not None:
            raise Conflict(f"A pool named {body.name!r} exists; change it with "
                           f"PATCH /api/v1/pools/{body.name}.")
    try:
        service.set_pool(engine_of(request), body.name, body.slots,
                         description=body.description, include_deferred=body.include_deferred)
    except service.PoolError as exc:
        raise ApiError(str(exc)) from None
    return _one(request, body.name)


@router.patch("/pools/{pool_name}", response_model=PoolResponse,
              responses={404: {"description": "No such pool"}})
def patch_pool(request: Request, pool_name: str, body: PoolPatchBody) -> PoolResponse:
    """Change a pool's slots, description or whether deferred task instances take slots."""
    try:
        service.update_pool(engine_of(request), pool_name, slots=body.slots,
                            description=body.description,
                            include_deferred=body.include_deferred)
    except service.PoolNotFound as exc:
        raise NotFound(str(exc)) from None
    except service.PoolError as exc:
        raise ApiError(str(exc)) from None
    return _one(request, pool_name)


@router.delete("/pools/{pool_name}", status_code=204,
               responses={400: {"description": "default_pool cannot be deleted"},
                          404: {"description": "No such pool"}})
def delete_pool(request: Request, pool_name: str) -> Response:
    """Delete a pool; its unfinished task instances wait until it exists again."""
    try:
        service.delete_pool(engine_of(request), pool_name)
    except service.PoolNotFound as exc:
        raise NotFound(str(exc)) from None
    except service.PoolError as exc:
        raise ApiError(str(exc)) from None
    return Response(status_code=204)
