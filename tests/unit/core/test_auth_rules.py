"""Roles, permissions and the failed-login limit: pure rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewright.core.auth import (
    GRANTS,
    LoginLimits,
    Permission,
    Role,
    allows,
    check_password,
    check_username,
    least_role,
    login_retry_after,
    parse_role,
)
from statewright.core.transitions import Actor, Person, kind_of

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_each_role_contains_the_one_before() -> None:
    assert GRANTS[Role.VIEWER] < GRANTS[Role.OPERATOR] < GRANTS[Role.ADMIN]
    assert [least_role(p) for p in (Permission.READ, Permission.OPERATE, Permission.ADMIN)] == [
        Role.VIEWER, Role.OPERATOR, Role.ADMIN]
    assert least_role(Permission.PUBLIC) is None
    assert all(allows(r, Permission.PUBLIC) and allows(r, Permission.AUTHENTICATED)
               for r in Role)
    assert not allows(Role.OPERATOR, Permission.ADMIN)


def test_bad_roles_usernames_and_passwords_say_what_is_allowed() -> None:
    assert parse_role(" Operator ") is Role.OPERATOR
    with pytest.raises(ValueError, match="use one of viewer, operator, admin"):
        parse_role("root")
    assert check_username("alice.b@corp-1") == "alice.b@corp-1"
    for bad in ("", "-x", "a b", "a/b", "x" * 65):
        with pytest.raises(ValueError, match="is not allowed"):
            check_username(bad)
    with pytest.raises(ValueError, match="at least 8"):
        check_password("1234567")


def test_failed_logins_wait_until_the_oldest_leaves_the_window() -> None:
    limits = LoginLimits(per_user=3, per_address=5, window=timedelta(minutes=5))
    two = [NOW - timedelta(minutes=4), NOW - timedelta(minutes=1)]
    assert login_retry_after(two, two, NOW, limits) is None
    three = [*two, NOW - timedelta(seconds=10)]
    assert login_retry_after(three, three, NOW, limits) == timedelta(minutes=1)
    old = [NOW - timedelta(minutes=6)] * 10  # outside the window: not counted
    assert login_retry_after(old, old, NOW, limits) is None
    many = [NOW - timedelta(seconds=s) for s in range(5)]
    assert login_retry_after([], many, NOW, limits) == timedelta(minutes=5) - timedelta(seconds=4)


def test_a_person_takes_the_edges_of_its_kind_and_is_recorded_by_name() -> None:
    assert Person(Actor.API, "alice").value == "user:alice"
    assert str(Person(Actor.USER, "bob")) == "cli:bob"
    assert kind_of(Person(Actor.API, "alice")) is Actor.API and kind_of(Actor.WORKER) is \
        Actor.WORKER


def test_undeclared_routes_of_the_admin_areas_need_admin() -> None:
    from statewright.core.auth import derived_permission

    assert derived_permission("/api/v1/connections", "GET") is Permission.ADMIN
    assert derived_permission("/api/v1/variables/{key}", "DELETE") is Permission.ADMIN
    assert derived_permission("/api/v1/pools", "GET") is Permission.READ
    assert derived_permission("/api/v1/pools/{name}", "PATCH") is Permission.ADMIN
    assert derived_permission("/api/v1/dags/{dag_id}", "PATCH") is Permission.OPERATE
    assert derived_permission("/api/v1/variablesx", "GET") is Permission.READ
