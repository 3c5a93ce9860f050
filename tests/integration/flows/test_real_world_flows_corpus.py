"""The corpus of users' Prefect files (tests/fixtures/real_world_flows) stays whole, and a
small subset still ends as under real Prefect 3 (``bench/real_world_flows.py`` runs all)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).parents[2] / "fixtures" / "real_world_flows"
sys.path.insert(0, str(CORPUS))
sys.path.insert(0, str(CORPUS.parents[2] / "bench"))

import _corpus  # noqa: E402
import real_world_flows as bench  # noqa: E402

SUBSET = [
    "anna-geller__prefect-deployment-patterns/data_and_state_dependencies/allow_failure/"
    "example_1.py",
    "mortenoh__prefect-examples/flows/core/core_table_and_link_artifacts.py",
    "Engelbert107__Looking-into-Prefect/concurrency_context_manager_1.py",
]
IMPORTS_RESOLVE_FLOOR = 50
"""Files whose every ``prefect`` import resolves under the alias (real Prefect 3.9: 49)."""


def test_every_source_is_present_with_its_commit_and_licence() -> None:
    sources = _corpus.flow_files()
    assert 40 <= len(sources) <= 60
    assert len({s["repo"] for s in sources}) >= 15
    for s in sources:
        assert (CORPUS / s["file"]).is_file(), s["file"]
        assert len(s["commit"]) == 40 and s["licence"]
    expected = json.loads(_corpus.EXPECTED.read_text())
    assert set(expected["files"]) == {s["file"] for s in sources}
    digest = hashlib.sha256(b"".join((CORPUS / s["file"]).read_bytes() for s in sources))
    assert digest.hexdigest()  # read whole: no file is a pointer or empty
    assert all((CORPUS / s["file"]).stat().st_size > 0 for s in sources)


def test_the_prefect_imports_of_the_corpus_resolve_under_the_alias() -> None:
    import ast

    import _probe

    from statewright.compat import prefect as alias

    alias.install()
    try:
        unresolved = {}
        for s in _corpus.flow_files():
            tree = ast.parse((CORPUS / s["file"]).read_text(encoding="utf-8"))
            missing = _probe.prefect_imports(tree)[1]
            if missing:
                unresolved[s["file"]] = missing
    finally:
        alias.uninstall()
    assert len(_corpus.flow_files()) - len(unresolved) >= IMPORTS_RESOLVE_FLOOR, unresolved


def test_a_subset_ends_as_under_prefect() -> None:
    expected = json.loads(_corpus.EXPECTED.read_text())
    got = _corpus.probe_all(sys.executable, dict(bench.ENV), workers=2, only=SUBSET)
    lines = {f: bench.compare(expected["files"][f], r) for f, r in got.items()}
    summary = bench.summarise(lines, expected["prefect"])
    assert summary["imports_resolve"] == len(SUBSET), lines
    assert summary["comparable_flows"] == len(SUBSET), lines
    assert summary["matching_flows"] == len(SUBSET), lines


def test_the_runner_prints_one_json_line() -> None:
    done = subprocess.run([sys.executable, str(CORPUS.parents[2] / "bench" /
                                               "real_world_flows.py"), SUBSET[0]],
                          capture_output=True, text=True, timeout=60, check=True)
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert line["files"] == 1 and line["matching_flows"] == 1
