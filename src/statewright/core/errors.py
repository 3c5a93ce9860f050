"""Errors of the domain. Each message says what was wrong, where, and what to do."""

from __future__ import annotations


class StatewrightError(Exception):
    """Base class of every error statewright raises on purpose."""


class InvalidTransition(StatewrightError):
    """A state change that the transition table does not allow."""

    def __init__(self, entity: str, frm: str, to: str, actor: str, detail: str = "") -> None:
        self.entity, self.frm, self.to, self.actor = entity, frm, to, actor
        msg = f"{entity}: the edge {frm} -> {to} is not allowed for actor {actor!r}."
        if detail:
            msg += f" {detail}"
        msg += " See docs/state-machines.md for the allowed edges."
        super().__init__(msg)


class DagDefinitionError(StatewrightError):
    """A DAG that cannot be accepted as written: a cycle, a duplicate id, a bad argument."""


class ConfigurationError(StatewrightError):
    """A setting that is missing or wrong."""
