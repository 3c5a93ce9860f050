"""What every try goes through in the worker and its task process: its log file's path, the
log's level around the try, the check of a workload against the input limits, and the names
that mask a value."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from statewright.core.limits import InputLimits
from statewright.sdk import masking
from statewright.services.worker.log_paths import log_path_for
from statewright.services.worker.sendable import unsendable_reason
from statewright.services.worker.task_runner import task_log
from statewright.services.worker.workload import Workload


def test_log_path_is_airflows_layout(tmp_path: Path) -> None:
    path = log_path_for(tmp_path, "d.x", "manual__2025-01-06T10:00:00+00:00", "grp.t", 2)
    assert path == str(tmp_path / "dag_id=d.x" / "run_id=manual__2025-01-06T10_00_00_00_00"
                       / "task_id=grp.t" / "attempt=2.log")
    mapped = log_path_for(tmp_path / "logs", "d", "r", "t", 1, map_index=0)
    assert mapped == str(tmp_path / "logs" / "dag_id=d" / "run_id=r" / "task_id=t"
                         / "map_index=0" / "attempt=1.log")
    assert log_path_for(None, "d", "r", "t", 1) is None


def test_each_try_finds_or_makes_its_log_folder(tmp_path: Path) -> None:
    """A first try makes the whole path; a new task of a run already logging makes one folder;
    a next try of the same task instance (the folder there) appends beside it."""
    log = logging.getLogger("statewright.task")
    for task_id, attempt in (("a", 1), ("b", 1), ("b", 2)):
        path = log_path_for(tmp_path / "logs", "d", "r", task_id, attempt)
        assert path is not None
        with task_log(path):
            log.info("try %s of %s", attempt, task_id)
        assert f"try {attempt} of {task_id}" in Path(path).read_text()
    assert sorted(p.name for p in (tmp_path / "logs" / "dag_id=d" / "run_id=r").iterdir()) == [
        "task_id=a", "task_id=b"]
    assert len(list((tmp_path / "logs" / "dag_id=d" / "run_id=r" / "task_id=b").iterdir())) == 2


@pytest.mark.parametrize("level", [logging.WARNING, logging.INFO, logging.DEBUG])
def test_task_log_writes_info_and_puts_the_level_back(tmp_path: Path, level: int) -> None:
    root = logging.getLogger()
    before = root.level
    root.setLevel(level)
    try:
        path = tmp_path / "a" / "b" / "attempt=1.log"
        with task_log(str(path)):
            assert root.level == logging.INFO
            logging.getLogger("statewright.task").info("hello from the try")
        assert root.level == level
        assert "INFO statewright.task: hello from the try" in path.read_text()
    finally:
        root.setLevel(before)


def _workload(**fields: object) -> Workload:
    base: dict[str, object] = dict(
        ti_id=1, dag_id="d", run_id="r", task_id="t", dag_run_id=1, try_number=1, max_tries=0,
        fileloc=None, logical_date=None, data_interval_start=None, data_interval_end=None,
        conf={}, run_type="manual")
    base.update(fields)
    return Workload(**base)  # type: ignore[arg-type]


def test_a_workload_is_checked_only_when_it_carries_values() -> None:
    limits = InputLimits(max_depth=2, max_items=3, max_bytes=1000)
    assert unsendable_reason(_workload(), limits) is None
    assert unsendable_reason(_workload(conf={"a": 1}), limits) is None
    deep = unsendable_reason(_workload(conf={"a": {"b": {"c": 1}}}), limits)
    assert deep is not None and "nests more than 2 levels" in deep
    pushed = unsendable_reason(_workload(pushed={"up": {"k": [[[1]]]}}), limits)
    assert pushed is not None and "pushed value" in pushed


def test_sensitive_names_follow_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(masking.SENSITIVE_NAMES_SETTING, raising=False)
    assert masking.is_sensitive_name("db_password")
    assert not masking.is_sensitive_name("pin_code")
    monkeypatch.setenv(masking.SENSITIVE_NAMES_SETTING, "pin, other")
    assert masking.is_sensitive_name("PIN_code")
    assert masking.redact({"pin_code": "1234", "x": "y"}) == {"pin_code": "***", "x": "y"}
    monkeypatch.delenv(masking.SENSITIVE_NAMES_SETTING)
    assert not masking.is_sensitive_name("pin_code")
