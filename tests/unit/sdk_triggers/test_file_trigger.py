from __future__ import annotations

import asyncio

import pytest

from statewright.sdk.triggers import FileTrigger, TriggerEvent


async def _first_event(trigger, timeout: float = 5.0) -> TriggerEvent:
    events = trigger.run()
    try:
        return await asyncio.wait_for(anext(events), timeout)
    finally:
        await events.aclose()


def test_fires_when_the_file_appears(tmp_path):
    target = tmp_path / "incoming" / "data.csv"

    async def scenario() -> TriggerEvent:
        async def create_later() -> None:
            await asyncio.sleep(0.05)
            target.parent.mkdir()
            target.write_text("a,b\n")

        creator = asyncio.create_task(create_later())
        trigger = FileTrigger(str(tmp_path / "incoming" / "*.csv"), poke_interval=0.01)
        event = await _first_event(trigger)
        await creator
        return event

    assert asyncio.run(scenario()) == TriggerEvent({"path": str(target)})


def test_does_not_fire_before_the_file_exists(tmp_path):
    async def scenario() -> None:
        trigger = FileTrigger(str(tmp_path / "missing.txt"), poke_interval=0.01)
        with pytest.raises(TimeoutError):
            await _first_event(trigger, timeout=0.1)

    asyncio.run(scenario())


def test_existing_file_fires_at_once_with_the_first_sorted_match(tmp_path):
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a.txt").write_text("")
    event = asyncio.run(_first_event(FileTrigger(str(tmp_path / "*.txt"))))
    assert event.payload == {"path": str(tmp_path / "a.txt")}


def test_recursive_pattern_and_directory_match(tmp_path):
    deep = tmp_path / "x" / "y"
    deep.mkdir(parents=True)
    (deep / "done.flag").write_text("")
    recursive = FileTrigger(str(tmp_path / "**" / "*.flag"), recursive=True)
    assert asyncio.run(_first_event(recursive)).payload == {"path": str(deep / "done.flag")}
    directory = FileTrigger(str(tmp_path / "x"))
    assert asyncio.run(_first_event(directory)).payload == {"path": str(deep / "done.flag")}


def test_an_empty_directory_is_not_a_file(tmp_path):
    (tmp_path / "empty").mkdir()

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            await _first_event(FileTrigger(str(tmp_path / "empty"), poke_interval=0.01), 0.1)

    asyncio.run(scenario())


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="non-empty"):
        FileTrigger("")
    with pytest.raises(ValueError, match="poke_interval"):
        FileTrigger("/x", poke_interval=0)
