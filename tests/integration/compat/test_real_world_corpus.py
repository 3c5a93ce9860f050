"""The corpus of users' DAG files (``tests/fixtures/real_world_dags``): its integrity, and a floor
of files that load through the compatibility layer (``bench/real_world_dags.py`` measures the
rest: runs compared with real Airflow's).

Loading happens in one child process (the files' imports stay out of the test process), each
file in a copy of its repository folder with its DAGs and plugins folders on ``sys.path``, as
``bench/real_world_dags.py`` and the oracle have them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parents[2] / "fixtures" / "real_world_dags"
SOURCES = json.loads((CORPUS / "SOURCES.json").read_text())

LOAD_FLOOR = 131
"""Files that load now (``bench/real_world_dags.py``'s ``loading``): fewer is a regression."""

_LOADER = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import _corpus
from statewright.compat.airflow.check import check_file

out = {}
for source in _corpus.dag_files():
    staged = _corpus.stage(source["file"])
    added = [str(staged.dags_folder), str(staged.plugins_folder)]
    sys.path[:0] = added
    os.environ["STATEWRIGHT_PLUGINS_FOLDER"] = str(staged.plugins_folder)
    try:
        report = check_file(staged.file, airflow=True)
        out[source["file"]] = report.loads
    finally:
        del sys.path[:len(added)]
        for name, module in list(sys.modules.items()):
            if str(staged.tmp) in str(getattr(module, "__file__", "") or ""):
                del sys.modules[name]
        staged.cleanup()
print("LOADS " + json.dumps(out))
"""


def _files_on_disk() -> set[str]:
    return {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*")
            if p.is_file() and "__" in p.relative_to(CORPUS).parts[0]
            and "__pycache__" not in p.parts}


def test_every_file_is_a_listed_source_with_its_origin() -> None:
    dags, helpers = SOURCES["dags"], SOURCES["helpers"]
    listed = [s["file"] for s in dags + helpers]
    assert len(listed) == len(set(listed))
    assert set(listed) == _files_on_disk()
    for s in dags + helpers:
        assert s["file"] == f"{s['repo'].replace('/', '__')}/{s['path']}"
        assert re.fullmatch(r"[0-9a-f]{40}", s["commit"]), s
        assert s["licence"]
    assert all(s["airflow"] in (2, 3) for s in dags)


def test_the_corpus_is_wide_enough() -> None:
    dags = SOURCES["dags"]
    assert 100 <= len(dags) <= 150
    assert len({s["repo"] for s in dags}) >= 25
    assert {2, 3} <= {s["airflow"] for s in dags}
    assert not any(s["repo"].lower().startswith(("apache/", "astronomer/")) for s in dags)


def test_real_airflow_recorded_every_file() -> None:
    expected = json.loads((CORPUS / "expected.json").read_text())
    for major in (2, 3):
        files = expected[f"airflow{major}"]["files"]
        assert set(files) == {s["file"] for s in SOURCES["dags"]}, major
        for rec in files.values():
            assert isinstance(rec["parses"], bool)
            assert set(rec["runs"]) <= set(rec.get("dags", {}))


@pytest.fixture(scope="module")
def loads() -> dict[str, bool]:
    env_python = sys.executable
    proc = subprocess.run([env_python, "-c", _LOADER, str(CORPUS)], capture_output=True,
                          text=True, timeout=120, cwd=CORPUS,
                          env={**_env(), "STATEWRIGHT_AIRFLOW_COMPAT": "true"})
    lines = [x for x in proc.stdout.splitlines() if x.startswith("LOADS ")]
    assert lines, proc.stderr[-2000:]
    result: dict[str, bool] = json.loads(lines[-1][len("LOADS "):])
    return result


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}


def test_at_least_the_floor_of_files_load(loads: dict[str, bool]) -> None:
    assert set(loads) == {s["file"] for s in SOURCES["dags"]}
    loading = sum(loads.values())
    assert loading >= LOAD_FLOOR, f"{loading} files load, fewer than the floor {LOAD_FLOOR}"
