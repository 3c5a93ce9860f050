"""CLI commands: triggers."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
