"""CLI commands: users of the REST API and the web UI — create, list, delete, set-password,
set-role, end-sessions — and API tokens of a user (create-token, tokens, revoke-token)."""

from __future__ import annotations

import sys
from typing import Any

import click

from statewright.cli.output import (
    confirm,
    console,
    fail,
    friendly,
    output_option,
    print_rows,
    yes_option,
)
from statewright.core.auth import Role

ROLES = click.Choice([r.value for r in Role], case_sensitive=False)


def register(cli: click.Group) -> None:
    cli.add_command(users)


def _engine(app: Any) -> Any:
    app.ensure_schema()
    return app.engine


def _now() -> Any:
    from statewright.core.clock import utcnow

    return utcnow()


def _password(password: str | None, *, stdin: bool) -> str:
    if stdin:
        value = sys.stdin.readline().rstrip("\n")
        if not value:
            fail("--password-stdin: no password on standard input; nothing was changed", 2)
        return value
    if password is not None:
        return password
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


_password_options = [
    click.option("--password", "-p", help="The password (default: asked for, not echoed)."),
    click.option("--password-stdin", is_flag=True, help="Read the password from stdin."),
]


def _with_password(fn: Any) -> Any:
    for option in reversed(_password_options):
        fn = option(fn)
    return fn


@click.group()
def users() -> None:
    """Users of the REST API and the web UI, with roles viewer, operator and admin."""


@users.command("create")
@click.argument("username")
@click.option("--role", "-r", type=ROLES, default="viewer", show_default=True,
              help="viewer reads; operator also triggers, clears, marks, cancels, pauses; "
                   "admin also manages users.")
@_with_password
@click.pass_obj
@friendly
def users_create(app: Any, username: str, role: str, password: str | None,
                 password_stdin: bool) -> None:
    """Create USERNAME with a password (stored argon2id-hashed) and a role."""
    from statewright.services.auth.accounts import create_user

    create_user(_engine(app), username, _password(password, stdin=password_stdin), role, _now())
    console.print(f"created user [bold]{username}[/] ({role.lower()})", highlight=False)


@users.command("list")
@output_option
@click.pass_obj
@friendly
def users_list(app: Any, output: str) -> None:
    """Every user and role."""
    from statewright.services.auth.accounts import is_active, list_users

    rows = list_users(_engine(app))
    listed = [{"username": r.username, "role": r.role, "active": is_active(r),
               "created_at": r.created_at,
               "updated_at": r.updated_at, "created": r.created_at.strftime("%Y-%m-%d %H:%M"),
               "changed": r.updated_at.strftime("%Y-%m-%d %H:%M")} for r in rows]
    if output in ("json", "yaml"):
        for d in listed:
            del d["created"], d["changed"]
    print_rows(listed, output, ["username", "role", "active", "created", "changed"])


@users.command("delete")
@click.argument("username")
@yes_option
@click.pass_obj
@friendly
def users_delete(app: Any, username: str, yes: bool) -> None:
    """Delete USERNAME with its API tokens and sessions."""
    from statewright.services.auth.accounts import delete_user

    confirm(f"Delete user {username!r} and its tokens?", yes=yes)
    delete_user(_engine(app), username)
    console.print(f"deleted user [bold]{username}[/]", highlight=False)


_revoke_option = click.option(
    "--revoke-api-tokens", is_flag=True,
    help="Also revoke the user's API tokens (its JWTs and web UI sessions end anyway).")


@users.command("set-password")
@click.argument("username")
@_with_password
@_revoke_option
@click.pass_obj
@friendly
def users_set_password(app: Any, username: str, password: str | None,
                       password_stdin: bool, revoke_api_tokens: bool) -> None:
    """Give USERNAME a new password: its JWTs and web UI sessions end."""
    from statewright.services.auth.accounts import set_password

    set_password(_engine(app), username, _password(password, stdin=password_stdin), _now(),
                 revoke_api_tokens=revoke_api_tokens)
    console.print(f"new password for [bold]{username}[/]; its sign-ins ended"
                  + (" and its API tokens were revoked" if revoke_api_tokens else ""),
                  highlight=False)


@users.command("set-role")
@click.argument("username")
@click.argument("role", type=ROLES)
@_revoke_option
@click.pass_obj
@friendly
def users_set_role(app: Any, username: str, role: str, revoke_api_tokens: bool) -> None:
    """Give USERNAME the ROLE viewer, operator or admin: its JWTs and web UI sessions end."""
    from statewright.services.auth.accounts import set_role

    set_role(_engine(app), username, role, _now(), revoke_api_tokens=revoke_api_tokens)
    console.print(f"[bold]{username}[/] is now {role.lower()}; its sign-ins ended"
                  + (" and its API tokens were revoked" if revoke_api_tokens else ""),
                  highlight=False)


@users.command("deactivate")
@click.argument("username")
@click.pass_obj
@friendly
def users_deactivate(app: Any, username: str) -> None:
    """USERNAME can no longer sign in: its JWTs, web UI sessions and API tokens end at once
    (`users reactivate` gives its password back)."""
    from statewright.services.auth.accounts import set_active

    set_active(_engine(app), username, False, _now())
    console.print(f"[bold]{username}[/] is deactivated: it cannot sign in, and its sessions "
                  "and API tokens ended", highlight=False)


@users.command("reactivate")
@click.argument("username")
@click.pass_obj
@friendly
def users_reactivate(app: Any, username: str) -> None:
    """USERNAME may sign in again with its password."""
    from statewright.services.auth.accounts import set_active

    set_active(_engine(app), username, True, _now())
    console.print(f"[bold]{username}[/] may sign in again", highlight=False)


@users.command("end-sessions")
@click.argument("username")
@_revoke_option
@click.pass_obj
@friendly
def users_end_sessions(app: Any, username: str, revoke_api_tokens: bool) -> None:
    """Sign USERNAME out everywhere: its JWTs and web UI sessions stop working at once."""
    from statewright.services.auth.accounts import end_sign_ins

    sessions, tokens = end_sign_ins(_engine(app), username, _now(),
                                    api_tokens=revoke_api_tokens)
    console.print(f"ended the sign-ins of [bold]{username}[/]: {sessions} web UI session(s)"
                  + (f", {tokens} API token(s) revoked" if revoke_api_tokens else
                     "; its API tokens still work (--revoke-api-tokens)"), highlight=False)


@users.command("tokens")
@click.argument("username")
@output_option
@click.pass_obj
@friendly
def users_tokens(app: Any, username: str, output: str) -> None:
    """The API tokens of USERNAME (never their secrets)."""
    from statewright.services.auth.accounts import tokens_of

    def when(value: Any) -> str:
        return value.strftime("%Y-%m-%d %H:%M") if value else ""

    rows = [{"id": r.id, "name": r.name, "prefix": r.prefix, "created": when(r.created_at),
             "expires": when(r.expires_at) or "never", "last_used": when(r.last_used_at),
             "revoked": when(r.revoked_at)} for r in tokens_of(_engine(app), username)]
    print_rows(rows, output, ["id", "name", "prefix", "created", "expires", "last_used",
                              "revoked"])


@users.command("revoke-token")
@click.argument("token_id", type=int)
@click.pass_obj
@friendly
def users_revoke_token(app: Any, token_id: int) -> None:
    """Revoke the API token TOKEN_ID (`statewright users tokens USERNAME` lists them)."""
    from statewright.core.auth import Role
    from statewright.services.auth.accounts import Identity, revoke_token

    revoke_token(_engine(app), token_id, by=Identity("cli", Role.ADMIN, "cli"), now=_now())
    console.print(f"revoked API token {token_id}", highlight=False)


def _expiry(value: str | None, default_days: int) -> int | None:
    """Days from ``--expires`` (a number of days, or ``never``); None: until revoked."""
    if value is None:
        return default_days or None
    if value.strip().lower() == "never":
        return None
    days = value.strip().lower().removesuffix("d")
    if not days.isdigit() or not 1 <= int(days) <= 3650:
        fail(f"--expires {value!r}: give a number of days from 1 to 3650 (e.g. 30 or 30d), "
             "or never; nothing was changed", 2)
    return int(days)


@users.command("create-token")
@click.argument("username")
@click.option("--name", "-n", required=True, help="What the token is for.")
@click.option("--expires", "--expires-in-days", "expires", default=None, metavar="DAYS|never",
              help="Days it is valid (default: STATEWRIGHT_API_TOKEN_DEFAULT_DAYS, 90), or "
                   "never.")
@click.pass_obj
@friendly
def users_create_token(app: Any, username: str, name: str, expires: str | None) -> None:
    """Create a long-lived API token of USERNAME and print it (once; it is stored hashed)."""
    from datetime import timedelta

    from statewright.services.auth.accounts import create_token

    days = _expiry(expires, app.settings.api_token_default_days)
    secret, pk = create_token(_engine(app), username, kind="api", name=name, now=_now(),
                              lifetime=timedelta(days=days) if days else None)
    until = f"valid {days} days" if days else "valid until revoked"
    console.print(f"API token {pk} of [bold]{username}[/] ({name}, {until}); it is not shown "
                  "again:", highlight=False)
    click.echo(secret)


def initial_admin(app: Any) -> None:
    """On a database without users (a fresh home): create ``admin`` with a random password,
    print it once and store it 0600 in $STATEWRIGHT_HOME."""
    from statewright.services.auth.accounts import INITIAL_PASSWORD_FILE, ensure_initial_admin

    password = ensure_initial_admin(_engine(app), app.settings.home, _now())
    if password is None:
        return
    path = app.settings.home / INITIAL_PASSWORD_FILE
    console.print(f"created the user [bold]admin[/] (role admin) with the password "
                  f"[bold]{password}[/] — shown once; also stored in {path} (mode 0600). "
                  "Change it with `statewright users set-password admin`.",
                  highlight=False, soft_wrap=True)
