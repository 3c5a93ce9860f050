"""Roles, permissions and the rules of logging in: pure data and decisions, no I/O.

Three roles, each containing the one before: ``viewer`` reads everything, ``operator`` also
changes states (trigger, clear, mark, cancel, pause, backfill), ``admin`` also manages users,
pools and the other admin pages. A route needs one permission: declared on the route, or
derived when it declares none: admin under the admin areas (connections, variables; writes of
pools), else by its HTTP method (reads need ``read``, writes ``operate``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Role(StrEnum):
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"


class Permission(StrEnum):
    PUBLIC = "public"
    """No credentials needed: the health check and the login routes."""
    AUTHENTICATED = "authenticated"
    """Any signed-in user, whatever the role: one's own tokens, logging out."""
    READ = "read"
    OPERATE = "operate"
    ADMIN = "admin"


GRANTS: dict[Role, frozenset[Permission]] = {
    Role.VIEWER: frozenset({Permission.AUTHENTICATED, Permission.READ}),
    Role.OPERATOR: frozenset({Permission.AUTHENTICATED, Permission.READ, Permission.OPERATE}),
    Role.ADMIN: frozenset(Permission) - {Permission.PUBLIC},
}
"""What each role may do (``public`` needs no role at all)."""

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def permission_for_method(method: str) -> Permission:
    """The permission a route that declares none needs: reads ``read``, anything else
    ``operate`` (a new write route is never open to viewers by default)."""
    return Permission.READ if method.upper() in READ_METHODS else Permission.OPERATE


ADMIN_AREAS = ("/connections", "/variables")
"""Routes under these (after the API prefix) need admin even to read: they hold secrets."""
ADMIN_WRITE_AREAS = ("/pools",)
"""Routes under these need admin to change anything (reading them is a viewer's)."""


def _under(path: str, areas: tuple[str, ...]) -> bool:
    return any(path == a or path.startswith(a + "/") for a in areas)


API_PREFIXES = ("/api/v1", "/api/v2")
"""statewright's own API and the Airflow-compatible one: the same areas under each."""


def derived_permission(path: str, method: str,
                       api_prefixes: tuple[str, ...] = API_PREFIXES) -> Permission:
    """The permission of a route that declares none: admin for the admin areas (connections,
    variables; writes of pools) under any API prefix, else by the method
    (``permission_for_method``)."""
    local = next((path[len(p):] for p in api_prefixes if path.startswith(p + "/")), path)
    if _under(local, ADMIN_AREAS):
        return Permission.ADMIN
    if _under(local, ADMIN_WRITE_AREAS) and method.upper() not in READ_METHODS:
        return Permission.ADMIN
    return permission_for_method(method)


def allows(role: Role, permission: Permission) -> bool:
    return permission is Permission.PUBLIC or permission in GRANTS[role]


def least_role(permission: Permission) -> Role | None:
    """The smallest role holding ``permission`` (None for public routes)."""
    if permission is Permission.PUBLIC:
        return None
    return next(r for r in Role if permission in GRANTS[r])


def parse_role(value: str) -> Role:
    """A role from its name, or a ValueError naming the choices."""
    try:
        return Role(value.strip().lower())
    except ValueError:
        raise ValueError(f"{value!r} is not a role; use one of "
                         f"{', '.join(r.value for r in Role)}.") from None


USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MIN_PASSWORD_LENGTH = 8


def check_username(username: str) -> str:
    """The username as stored, or a ValueError saying what is allowed."""
    if not USERNAME.match(username):
        raise ValueError(f"Username {username!r} is not allowed: use 1 to 64 letters, digits, "
                         "'_', '.', '@' or '-', starting with a letter or digit.")
    return username


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"The password is too short: use at least {MIN_PASSWORD_LENGTH} "
                         "characters.")
    return password


# -- failed logins ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LoginBackoff:
    """Delays that grow with failed logins, for one subject (an account seen from one client
    address, or one client address for every account): the first ``free`` attempts in a row
    go through at once; from then on each attempt makes the next one wait ``base`` seconds,
    doubled at each further attempt, at most ``cap``. A subject left alone for ``window``
    after its last wait ended starts again from zero; a successful login resets an account's
    count (and takes back its own attempt from the address)."""

    free: int = 5
    base: timedelta = timedelta(seconds=1)
    cap: timedelta = timedelta(minutes=15)
    window: timedelta = timedelta(minutes=5)

    def delay(self, attempts: int) -> timedelta:
        """How long the attempt after the ``attempts``-th in a row must wait."""
        if attempts < self.free:
            return timedelta(0)
        steps = min(attempts - self.free, 40)
        grown: timedelta = self.base * (2 ** steps)
        return min(grown, self.cap)


@dataclass(frozen=True)
class Attempt:
    """One login attempt counted before the password is checked: the subject's new count and
    the moment before which the next attempt is refused."""

    attempts: int
    blocked_until: datetime


def count_attempt(attempts: int, blocked_until: datetime | None, now: datetime,
                  rule: LoginBackoff) -> Attempt | timedelta:
    """Count an attempt of a subject with ``attempts`` so far (the last one making the next
    wait until ``blocked_until``): the new count, or how long to wait (nothing counted)."""
    if blocked_until is not None:
        if blocked_until > now and rule.delay(attempts) > timedelta(0):
            # (an attempt that imposed no wait never refuses one counted a moment earlier)
            return max(blocked_until - now, timedelta(seconds=1))
        if now - blocked_until >= rule.window:
            attempts = 0  # quiet for a whole window: forgotten
    attempts += 1
    return Attempt(attempts, now + rule.delay(attempts))


# -- who changed a state ---------------------------------------------------------------------


def person_actor(prefix: str, name: str) -> str:
    """The actor recorded in the state history for a person: ``user:alice`` (API, UI),
    ``cli:bob`` (the command line)."""
    return f"{prefix}:{name}"
