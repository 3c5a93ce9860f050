"""Pools: creating, changing and deleting them with the checks the CLI, the API and the UI
share (``statewright pools``, ``/api/v1/pools``, the Pools page)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from statewright.core.errors import StatewrightError
from statewright.db.engine import transaction
from statewright.db.repositories import pools as pool_repo


class PoolError(StatewrightError):
    pass


class PoolNotFound(PoolError):
    pass


@dataclass(frozen=True)
class PoolDeleted:
    name: str
    in_use: int  # unfinished task instances that use it: they wait until it exists again


def check_pool(name: str, slots: int | None) -> None:
    """A ``PoolError`` saying what is wrong with a pool's name or slots."""
    if not name.strip() or len(name) > 256:
        raise PoolError("a pool name must be 1 to 256 characters long.")
    if slots is not None and slots < 0:
        raise PoolError(f"a pool needs 0 slots or more, got {slots}.")


def set_pool(engine: Engine, name: str, slots: int, *, description: str | None = None,
             include_deferred: bool | None = None) -> bool:
    """Create pool ``name`` or change it; True when it was created."""
    check_pool(name, slots)
    with transaction(engine) as conn:
        return pool_repo.set_pool(conn, name, slots, description=description,
                                  include_deferred=include_deferred)


def update_pool(engine: Engine, name: str, *, slots: int | None = None,
                description: str | None = None, include_deferred: bool | None = None) -> None:
    """Change an existing pool (``PoolNotFound`` when there is none)."""
    check_pool(name, slots)
    with transaction(engine) as conn:
        row = pool_repo.get(conn, name)
        if row is None:
            raise PoolNotFound(f"No pool named {name!r}; see `statewright pools list`.")
        pool_repo.set_pool(conn, name, int(row.slots) if slots is None else slots,
                           description=description, include_deferred=include_deferred)


def delete_pool(engine: Engine, name: str) -> PoolDeleted:
    """Delete a pool; ``default_pool`` cannot be deleted."""
    if name == pool_repo.DEFAULT_POOL:
        raise PoolError(f"{name} cannot be deleted; change its slots with "
                        f"`statewright pools set {name} N`.")
    with transaction(engine) as conn:
        in_use = pool_repo.task_instances_in_pool(conn, name)
        if not pool_repo.delete_pool(conn, name):
            raise PoolNotFound(f"No pool named {name!r}; see `statewright pools list`.")
    return PoolDeleted(name, in_use)
