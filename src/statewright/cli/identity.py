"""Who runs the command line: the actor of the state changes it makes (``cli:$USER``)."""

from __future__ import annotations

import getpass
import os

from statewright.core.transitions import Actor, Person


def cli_actor() -> Person:
    """``cli:<login name>``: $USER, else the name of the process's user."""
    name = os.environ.get("USER") or os.environ.get("LOGNAME")
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = f"uid{os.getuid()}"
    return Person(Actor.USER, name)
