"""Users' Prefect flow files from public repositories, through statewright, against real
Prefect 3 (not a test). Prints one JSON line; with ``--details``, one JSON line per file before it.

Each file of ``tests/fixtures/real_world_flows`` runs in its own process, in a copy of its
repository folder with a fresh ``STATEWRIGHT_HOME`` and no network, under statewright's
``prefect`` alias (``_probe.py`` with ``PROBE_ENGINE=statewright``): do its ``prefect`` imports
resolve, does it import, and the final state of its main flow runs and their task runs, as
``expected.json`` recorded them under real Prefect (``_record_expected.py``).

Figures:
- ``imports_resolve``: files whose every ``prefect`` import resolves / all files (and the same
  under real Prefect, from the oracle);
- ``loads``: files that import (their other dependencies installed here or not);
- ``comparable_flows``: main flow runs the oracle ran to a state, in files both import;
  ``matching_flows``: those whose final state (type and name) and task runs' final states
  (by task name) are the oracle's.

Usage: python bench/real_world_flows.py [--details] [--jobs 2] [FILE ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parents[1] / "tests" / "fixtures" / "real_world_flows"
sys.path.insert(0, str(CORPUS))
import _corpus  # noqa: E402

ENV = {"PROBE_ENGINE": "statewright", "STATEWRIGHT_PREFECT_COMPAT": "true"}


def compare(expected: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """One file's line: what resolved, and each comparable flow's match (or why not)."""
    line: dict[str, Any] = {
        "resolves": not got.get("unresolved") and "probe_error" not in got
        and not got.get("timeout"),
        "resolves_prefect": not expected.get("unresolved") and "probe_error" not in expected,
        "unresolved": got.get("unresolved", []),
        "loads": "flow_names" in got,
        "loads_prefect": "flow_names" in expected,
    }
    for key in ("import_error", "probe_error", "timeout"):
        if key in got:
            line[key] = got[key]
    if not (_corpus.comparable(expected) and line["loads"]):
        return line
    want = {f[0]: f for f in _corpus.outcome(expected)}
    have = {f[0]: f for f in _corpus.outcome(got)}
    line["flows"] = {}
    for name, exp in want.items():
        if exp[1] is None:
            continue  # the oracle's call raised before a state: not comparable
        line["flows"][name] = {"match": have.get(name) == exp, "expected": exp[1:],
                               "got": have.get(name, [None])[1:]}
    return line


def summarise(lines: dict[str, dict[str, Any]], prefect: str) -> dict[str, Any]:
    flows = [f for ln in lines.values() for f in ln.get("flows", {}).values()]
    return {
        "files": len(lines),
        "imports_resolve": sum(ln["resolves"] for ln in lines.values()),
        "imports_resolve_prefect": sum(ln["resolves_prefect"] for ln in lines.values()),
        "loads": sum(ln["loads"] for ln in lines.values()),
        "loads_prefect": sum(ln["loads_prefect"] for ln in lines.values()),
        "comparable_flows": len(flows),
        "matching_flows": sum(f["match"] for f in flows),
        "prefect": prefect,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    expected = json.loads(_corpus.EXPECTED.read_text())
    got = _corpus.probe_all(sys.executable, dict(ENV), workers=args.jobs,
                            only=args.files or None)
    lines = {f: compare(expected["files"][f], r) for f, r in got.items()}
    if args.details:
        for name, line in lines.items():
            print(json.dumps({"file": name, **line}, default=str))
    print(json.dumps(summarise(lines, expected["prefect"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
