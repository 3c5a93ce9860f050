"""Prefect 3's transactions: ``with transaction():`` groups task runs whose side effects commit or
roll back together.

Every task run stages its result in a transaction of its own, a child of the one around it.
When the outermost transaction exits cleanly it commits: children first, then its own
``on_commit`` hooks. When an exception leaves it, it rolls back: its ``on_rollback`` hooks in
reverse order, then its children's in reverse; a completed task run that is rolled back ends
``RolledBack`` (type completed), and the exception goes on.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from enum import StrEnum
from typing import Any

log = logging.getLogger("statewright.flows.transactions")


class CommitMode(StrEnum):
    EAGER = "EAGER"
    LAZY = "LAZY"
    OFF = "OFF"


class TransactionState(StrEnum):
    PENDING = "PENDING"
    ACTIVE = "ACTIVE"
    STAGED = "STAGED"
    COMMITTED = "COMMITTED"
    ROLLED_BACK = "ROLLED_BACK"


Hook = Callable[["Transaction"], Any]

_current: contextvars.ContextVar[Transaction | None] = contextvars.ContextVar(
    "statewright_transaction", default=None
)


class Transaction:
    """One transaction (Prefect's names: ``key``, ``commit_mode``, ``get``/``set``, ``stage``,
    ``commit``, ``rollback``)."""

    def __init__(self, key: str | None = None, commit_mode: CommitMode | None = None,
                 logger: logging.Logger | logging.LoggerAdapter[Any] | None = None) -> None:
        if commit_mode is not None and not isinstance(commit_mode, CommitMode):
            commit_mode = CommitMode(commit_mode)
        self.key = key
        self.commit_mode = commit_mode
        self.state = TransactionState.PENDING
        self.children: list[Transaction] = []
        self.on_commit_hooks: list[Hook] = []
        self.on_rollback_hooks: list[Hook] = []
        self.logger = logger or log
        self._staged_value: Any = None
        self._values: dict[str, Any] = {}
        self._parent: Transaction | None = None
        self._token: contextvars.Token[Transaction | None] | None = None

    # -- shared values -------------------------------------------------------------------------

    def set(self, name: str, value: Any) -> None:
        self._values[name] = value

    def get(self, name: str, default: Any = ...) -> Any:
        txn: Transaction | None = self
        while txn is not None:
            if name in txn._values:
                return txn._values[name]
            txn = txn._parent
        if default is ...:
            raise ValueError(f"Could not retrieve value for unknown key: {name}")
        return default

    def get_parent(self) -> Transaction | None:
        return self._parent

    def is_committed(self) -> bool:
        return self.state is TransactionState.COMMITTED

    def is_rolled_back(self) -> bool:
        return self.state is TransactionState.ROLLED_BACK

    def is_active(self) -> bool:
        return self.state is TransactionState.ACTIVE

    # -- the context ---------------------------------------------------------------------------

    def __enter__(self) -> Transaction:
        if self._token is not None or self.state is not TransactionState.PENDING:
            raise RuntimeError(
                "Context already entered. Context enter calls cannot be nested: this "
                f"transaction (key {self.key!r}) is already in use; open a new transaction() "
                "for the inner block."
            )
        parent = _current.get()
        if self.commit_mode is None:
            self.commit_mode = parent.commit_mode if parent else CommitMode.LAZY
        if parent is not None:
            self._parent = parent
            parent.children.append(self)
        self.state = TransactionState.ACTIVE
        self._token = _current.set(self)
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self._token is None:
            raise RuntimeError("Asymmetric use of context. Context exit called without an enter.")
        try:
            if exc_type is not None:
                self.rollback()
                return
            if self.commit_mode is CommitMode.EAGER:
                self.commit()
            if self._parent is not None:
                return  # the parent commits or rolls back its children
            if self.commit_mode is CommitMode.OFF:
                self.rollback()
            elif self.commit_mode is CommitMode.LAZY:
                self.commit()
        finally:
            _current.reset(self._token)

    # -- staging, commit, rollback ----------------------------------------------------------

    def stage(self, value: Any, on_rollback_hooks: list[Hook] | None = None,
              on_commit_hooks: list[Hook] | None = None) -> None:
        if self.state is not TransactionState.COMMITTED:
            self._staged_value = value
            self.on_rollback_hooks += on_rollback_hooks or []
            self.on_commit_hooks += on_commit_hooks or []
            self.state = TransactionState.STAGED

    def commit(self) -> bool:
        if self.state in (TransactionState.ROLLED_BACK, TransactionState.COMMITTED):
            return False
        try:
            for child in self.children:
                child.commit()
            for hook in self.on_commit_hooks:
                self._run_hook(hook, "commit")
        except Exception:
            self.logger.exception("An error was encountered while committing transaction %r",
                                  self.key)
            self.rollback()
            return False
        self.state = TransactionState.COMMITTED
        return True

    def rollback(self) -> bool:
        if self.state in (TransactionState.ROLLED_BACK, TransactionState.COMMITTED):
            return False
        try:
            for hook in reversed(self.on_rollback_hooks):
                self._run_hook(hook, "rollback")
            self.state = TransactionState.ROLLED_BACK
            for child in reversed(self.children):
                child.rollback()
        except Exception:
            self.logger.exception("An error was encountered while rolling back transaction %r",
                                  self.key)
            return False
        return True

    def _run_hook(self, hook: Hook, kind: str) -> None:
        name = getattr(hook, "__name__", repr(hook))
        quiet = getattr(hook, "log_on_run", True) is False
        if not quiet:
            self.logger.info("Running %s hook %r", kind, name)
        try:
            hook(self)
        except Exception:
            if not quiet:
                self.logger.error("An error was encountered while running %s hook %r", kind,
                                  name)
            raise


def transaction(key: str | None = None, commit_mode: CommitMode | None = None,
                logger: logging.Logger | None = None) -> Transaction:
    """A new transaction, to be used as ``with transaction():``."""
    return Transaction(key=key, commit_mode=commit_mode, logger=logger)


def get_transaction() -> Transaction | None:
    return _current.get()
