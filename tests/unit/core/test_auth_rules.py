"""Roles, permissions and the failed-login limit: pure rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewright.core.auth import (
    GRANTS,
    Attempt,
    LoginBackoff,
    Permission,
    Role,
    allows,
    check_password,
    check_username,
    count_attempt,
    least_role,
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


def test_login_attempts_past_the_free_ones_wait_longer_and_longer() -> None:
    rule = LoginBackoff(free=3, base=timedelta(seconds=2), cap=timedelta(seconds=30),
                        window=timedelta(minutes=5))
    # counted back to back: within a window, the count goes on
    attempts, until, now = 0, None, NOW
    waits = []
    for _ in range(7):
        counted = count_attempt(attempts, until, now, rule)
        assert isinstance(counted, Attempt)
        waits.append((counted.blocked_until - now).total_seconds())
        attempts, until = counted.attempts, counted.blocked_until
        now = until
    assert waits == [0, 0, 2, 4, 8, 16, 30]
    assert count_attempt(attempts, until, until - timedelta(seconds=3), rule) == timedelta(
        seconds=3)  # refused while blocked, nothing counted
    assert count_attempt(attempts, until, until - timedelta(milliseconds=1), rule) == timedelta(
        seconds=1)  # Retry-After is never 0
    quiet = count_attempt(attempts, until, until + timedelta(minutes=5), rule)
    assert quiet == Attempt(1, until + timedelta(minutes=5))  # forgotten after a quiet window


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
    # the Airflow-compatible API has the same areas: a v2 route that declares nothing is safe
    assert derived_permission("/api/v2/connections/{connection_id}", "GET") is Permission.ADMIN
    assert derived_permission("/api/v2/variables", "POST") is Permission.ADMIN
    assert derived_permission("/api/v2/pools/{pool_name}", "DELETE") is Permission.ADMIN
    assert derived_permission("/api/v2/pools", "GET") is Permission.READ
