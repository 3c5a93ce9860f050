"""DirectoryFileDeleteTrigger (Airflow 3.3's standard provider): fires once for its own file
name in a directory, after deleting that file; siblings on the same directory each take theirs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from statewright.sdk.triggers import import_trigger
from statewright.sdk.triggers.watchers import DirectoryFileDeleteTrigger


async def _first(trigger: DirectoryFileDeleteTrigger) -> dict[str, str]:
    async for event in trigger.run():
        return event.payload  # type: ignore[no-any-return]
    raise AssertionError("no event")


def test_fires_for_its_own_file_only(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"  # missing at first: the trigger keeps polling
    us = DirectoryFileDeleteTrigger(directory=str(inbox), filename="us.flag", poke_interval=0.01)
    eu = DirectoryFileDeleteTrigger(directory=str(inbox), filename="eu.flag", poke_interval=0.01)

    async def scenario() -> tuple[dict[str, str], bool]:
        waiting_us = asyncio.ensure_future(_first(us))
        waiting_eu = asyncio.ensure_future(_first(eu))
        await asyncio.sleep(0.05)
        inbox.mkdir()
        (inbox / "other.flag").write_text("")
        (inbox / "us.flag").write_text("")
        event = await asyncio.wait_for(waiting_us, 5)
        await asyncio.sleep(0.05)
        eu_fired = waiting_eu.done()
        waiting_eu.cancel()
        return event, eu_fired

    event, eu_fired = asyncio.run(scenario())
    assert event == {"filepath": str(inbox / "us.flag")}
    assert not (inbox / "us.flag").exists()
    assert (inbox / "other.flag").exists()
    assert not eu_fired


def test_serializes_with_its_arguments() -> None:
    trigger = DirectoryFileDeleteTrigger(directory="/tmp/flags", filename="a.flag")
    classpath, kwargs = trigger.serialize()
    assert kwargs == {"directory": "/tmp/flags", "filename": "a.flag", "poke_interval": 5.0}
    again = import_trigger(classpath, kwargs)
    assert isinstance(again, DirectoryFileDeleteTrigger)


@pytest.mark.parametrize("kwargs", [
    {"directory": "", "filename": "a"},
    {"directory": "/tmp", "filename": "sub/a"},
    {"directory": "/tmp", "filename": "a", "poke_interval": 0},
])
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="DirectoryFileDeleteTrigger"):
        DirectoryFileDeleteTrigger(**kwargs)  # type: ignore[arg-type]
