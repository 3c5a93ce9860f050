"""``Block``: a pydantic model saved under a name and loaded back, as Prefect's blocks.

A block document is stored as the statewright variable ``prefect-block/<type slug>/<name>``
(its fields as JSON, ``SecretStr`` fields revealed in the stored text): variables are
encrypted at rest, so a ``Secret`` is too. The type slug is Prefect's: the class name in
kebab case (``SlackWebhook`` → ``slack-webhook``), or ``_block_type_slug``.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, SecretBytes, SecretStr

from statewright.flows import extras

B = TypeVar("B", bound="Block")
PREFIX = "prefect-block/"

__all__ = ["Block", "BlockNotFound"]


class BlockNotFound(ValueError):
    """No block document of that type has that name (Prefect raises ``ValueError``)."""


def _slug(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def _reveal(value: Any) -> Any:
    if isinstance(value, SecretStr | SecretBytes):
        return value.get_secret_value()
    if isinstance(value, BaseModel):
        return {k: _reveal(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_reveal(v) for v in value]
    return value


class Block(BaseModel):
    """Subclass it with typed fields; ``save(name)`` and ``Block.load(name)``."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="allow")
    _block_type_slug: ClassVar[str | None] = None
    _block_document_name: str | None = None
    _block_document_id: uuid.UUID | None = None

    @classmethod
    def get_block_type_slug(cls) -> str:
        slug = cls.__dict__.get("_block_type_slug")
        return slug if isinstance(slug, str) else _slug(cls.__name__)

    @classmethod
    def _key(cls, name: str) -> str:
        if not name or not isinstance(name, str):
            raise ValueError(f"a block document needs a name, got {name!r}")
        return f"{PREFIX}{cls.get_block_type_slug()}/{name}"

    def save(self, name: str | None = None, overwrite: bool = False) -> uuid.UUID:
        """Store the block under ``name``; an existing one is replaced only with ``overwrite``."""
        name = name or self._block_document_name
        if name is None:
            raise ValueError("You're attempting to save a block document without a name.")
        key = self._key(name)
        if not overwrite and extras.call("var_get", key) is not None:
            raise ValueError(
                f"Block document with name {name!r} of type "
                f"{self.get_block_type_slug()!r} already exists: save(..., overwrite=True) "
                "replaces it.")
        data = {k: _reveal(getattr(self, k)) for k in self._field_names()}
        extras.call("var_put", (key, json.dumps(data, default=str),
                                f"Prefect block {self.get_block_type_slug()}"))
        self._block_document_name = name
        self._block_document_id = uuid.uuid5(uuid.NAMESPACE_URL, key)
        return self._block_document_id

    def _field_names(self) -> list[str]:
        return [*type(self).model_fields, *(self.model_extra or {})]

    @classmethod
    def load(cls: type[B], name: str, validate: bool = True, client: Any = None) -> B:
        """The block saved as ``name`` (``"type-slug/name"`` on ``Block`` itself)."""
        target: type[Block] = cls
        if "/" in name and (cls is Block or name.split("/", 1)[0] != cls.get_block_type_slug()):
            slug, name = name.split("/", 1)
            target = _by_slug(slug)
        text = extras.call("var_get", target._key(name))
        if text is None:
            raise BlockNotFound(f"Unable to find block document named {name} for block type "
                                f"{target.get_block_type_slug()}")
        data = json.loads(text)
        block = target.model_validate(data) if validate else target.model_construct(**data)
        block._block_document_name = name
        block._block_document_id = uuid.uuid5(uuid.NAMESPACE_URL, target._key(name))
        return block  # type: ignore[return-value]

    @classmethod
    def delete(cls, name: str) -> None:
        if not extras.call("var_delete", cls._key(name)):
            raise BlockNotFound(f"Unable to find block document named {name} for block type "
                                f"{cls.get_block_type_slug()}")

    @classmethod
    def register_type_and_schema(cls, client: Any = None) -> None:
        """Nothing to register here: a block type is its class."""

    async def aload(self, name: str) -> Any:  # pragma: no cover - thin async form
        return type(self).load(name)


def _by_slug(slug: str) -> type[Block]:
    todo: list[type[Block]] = [Block]
    while todo:
        cls = todo.pop()
        if cls.get_block_type_slug() == slug:
            return cls
        todo.extend(cls.__subclasses__())
    raise BlockNotFound(f"No block class for type {slug!r} has been imported.")
