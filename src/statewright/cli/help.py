"""The top-level ``--help``: every command with one whole line, and for a group the commands
it holds (so ``clear``, ``mark-success``, ``cancel``… are found from the first screen)."""

from __future__ import annotations

import click


def _summary(command: click.Command) -> str:
    text = (command.short_help or command.help or "").strip()
    first = " ".join(text.split("\n\n", 1)[0].split())
    return first.split(". ", 1)[0].rstrip(".")


def _members(ctx: click.Context, group: click.Group) -> str:
    names = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        if isinstance(sub, click.Group):
            names.append(f"{name} ({', '.join(_visible(ctx, sub))})")
        else:
            names.append(name)
    return ", ".join(names)


def _visible(ctx: click.Context, group: click.Group) -> list[str]:
    return [n for n in group.list_commands(ctx)
            if (c := group.get_command(ctx, n)) is not None and not c.hidden]


class RootGroup(click.Group):
    """A group whose help lists each command on one line, never cut at 45 characters."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            line = _summary(command)
            if isinstance(command, click.Group):
                line = f"{line} [{_members(ctx, command)}]"
            rows.append((name, line))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows, col_max=20)


__all__ = ["RootGroup"]
