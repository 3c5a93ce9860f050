"""Building claimed triggers: the class imported once per classpath, again when its module was
replaced, and the errors of ``import_trigger`` either way."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from statewright.sdk.triggers import BaseTrigger, DateTimeTrigger, TriggerEvent
from statewright.sdk.triggers.base import TriggerImportError
from statewright.services.triggerer import loading

DT = "statewright.sdk.triggers.temporal.DateTimeTrigger"


def test_built_from_the_cached_class_with_the_same_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    import statewright.sdk.triggers.base as base

    moment = datetime(2030, 1, 1, tzinfo=UTC)
    first = loading.build_trigger(DT, {"moment": moment})
    imports: list[str] = []
    real = base._import_class
    monkeypatch.setattr(base, "_import_class", lambda cp: imports.append(cp) or real(cp))
    second = loading.build_trigger(DT, {"moment": moment})
    assert type(first) is type(second) is DateTimeTrigger and imports == []
    with pytest.raises(TriggerImportError, match="cannot be built from its stored kwargs"):
        loading.build_trigger(DT, {"when": moment})
    with pytest.raises(TriggerImportError, match="has no timezone"):
        loading.build_trigger(DT, {"moment": datetime(2030, 1, 1)})


def _module_with_trigger(payload: str) -> types.ModuleType:
    mod = types.ModuleType("sw_test_reloaded_triggers")

    class Once(BaseTrigger):
        def serialize(self) -> tuple[str, dict[str, Any]]:
            return "sw_test_reloaded_triggers.Once", {}

        async def run(self) -> AsyncIterator[TriggerEvent]:
            yield TriggerEvent(payload)

    Once.__module__ = mod.__name__
    mod.Once = Once  # type: ignore[attr-defined]
    return mod


def test_a_replaced_module_is_imported_again(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _module_with_trigger("old")
    monkeypatch.setitem(sys.modules, old.__name__, old)
    assert type(loading.build_trigger("sw_test_reloaded_triggers.Once", {})) is old.Once
    new = _module_with_trigger("new")
    monkeypatch.setitem(sys.modules, new.__name__, new)  # reloaded
    assert type(loading.build_trigger("sw_test_reloaded_triggers.Once", {})) is new.Once
