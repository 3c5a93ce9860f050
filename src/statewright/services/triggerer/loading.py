"""Rebuilding the claimed triggers: decrypt each one's kwargs, import its class, build it.

A triggerer claims thousands at a time, most of one class: the class is imported once per
classpath (``importlib`` and the checks of ``import_trigger`` cost about as much as building
the trigger), and imported again if its module was replaced in ``sys.modules`` (reloaded).
Errors are always those of ``import_trigger``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from cryptography.fernet import MultiFernet

from statewright.crypto import FernetKeyError, decrypt_json, decrypt_many, value_of_plaintext
from statewright.sdk import serde
from statewright.sdk.triggers.base import TriggerImportError, import_trigger
from statewright.services.triggerer.events import Failure

_classes: dict[str, tuple[type, ModuleType | None]] = {}
"""classpath -> (the class, the module it was defined in, as it was when imported)."""


@dataclass
class Loaded:
    ok: list[tuple[int, Any, str]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def build_trigger(classpath: str, kwargs: dict[str, Any]) -> Any:
    """``import_trigger(classpath, kwargs)``, with the class imported once per classpath."""
    hit = _classes.get(classpath)
    if hit is not None and sys.modules.get(hit[0].__module__) is hit[1]:
        try:
            return hit[0](**kwargs)
        except (TypeError, ValueError):
            pass  # import_trigger raises the error, with its message
    trigger = import_trigger(classpath, kwargs)
    cls = type(trigger)
    _classes[classpath] = (cls, sys.modules.get(cls.__module__))
    return trigger


def load_triggers(rows: Sequence[Any], cipher: MultiFernet, state_reader: Any) -> Loaded:
    """Decrypt, import and build each trigger; the ones that cannot be become failures.

    Each row's kwargs are decoded once: stored by ``crypto.encrypt_serialized`` they come out of
    ``decrypt_json`` as serialized data, deserialized here; rows stored before, serialized
    twice by ``encrypt_json``, come out of ``decrypt_json`` deserialized once, and here once
    more (what they need).
    """
    out = Loaded()
    ok, failures = out.ok, out.failures
    deserialize = serde.deserialize
    # Decrypted all at once (``decrypt_many``); a token it leaves out is decrypted alone, which
    # raises its error.
    plaintexts = decrypt_many(cipher, [r.kwargs for r in rows])
    for r, plaintext in zip(rows, plaintexts, strict=True):
        # A row's attributes are read once each: a SQLAlchemy row's attribute is ~0.35 µs.
        trigger_id, classpath = r.id, r.classpath
        try:
            data = (decrypt_json(cipher, r.kwargs) if plaintext is None
                    else value_of_plaintext(plaintext))
            try:
                kwargs = deserialize(data)
            except serde.SerializationError:  # again, for the message naming the trigger
                kwargs = deserialize(data, path=f"kwargs of trigger {trigger_id}")
            trigger = build_trigger(classpath, kwargs)
        except (TriggerImportError, FernetKeyError, serde.SerializationError) as exc:
            failures.append(Failure(trigger_id, f"Trigger {trigger_id} could not be loaded: "
                                                f"{exc}", reason="trigger_load"))
            continue
        except Exception as exc:
            failures.append(Failure(
                trigger_id, f"Trigger {trigger_id} ({classpath}) could not be built: "
                            f"{type(exc).__name__}: {exc}", reason="trigger_load"))
            continue
        trigger.trigger_id = trigger_id
        if getattr(trigger, "needs_state_reader", False):
            trigger.state_reader = state_reader
        ok.append((trigger_id, trigger, classpath))
    return out
