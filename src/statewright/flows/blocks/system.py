"""Prefect's system blocks: ``Secret``, ``String``, ``JSON``, ``DateTime``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import SecretStr, field_validator

from statewright.flows.blocks.core import Block

__all__ = ["JSON", "DateTime", "Secret", "String"]


class Secret(Block):
    """A secret value (text, or any JSON value); ``get()`` returns it."""

    _block_type_slug: ClassVar[str | None] = "secret"
    value: Any

    @field_validator("value", mode="before")
    @classmethod
    def _wrap(cls, value: Any) -> Any:
        return SecretStr(value) if isinstance(value, str) else value

    def get(self) -> Any:
        value = self.value
        return value.get_secret_value() if isinstance(value, SecretStr) else value


class String(Block):
    _block_type_slug: ClassVar[str | None] = "string"
    value: str


class JSON(Block):
    _block_type_slug: ClassVar[str | None] = "json"
    value: Any


class DateTime(Block):
    _block_type_slug: ClassVar[str | None] = "date-time"
    value: datetime
