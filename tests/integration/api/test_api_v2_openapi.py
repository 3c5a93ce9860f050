"""Our /api/v2 OpenAPI document against Airflow 3.3's (as the official client ships it): for
every operation we serve, the paths and methods, parameter names and which are required, body
fields, the success status and the answer's fields and required ones. A difference fails unless
docs/api.md lists it (with its reason) in the table of /api/v2's differences; a listed
difference that is gone fails too, so the table stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from airflow_client_harness import ROOT, airflow_openapi, client_python
from openapi_diff import Diff, operation_diffs
from sqlalchemy import create_engine

from statewright.api import create_app
from statewright.config import load_settings

DOC = ROOT / "docs" / "api.md"
SECTION = "### Differences from Airflow 3.3"


@pytest.fixture(scope="session")
def airflow_client() -> Path:
    return client_python()


def listed_differences() -> dict[Diff, str]:
    """``(operation, kind, name) -> reason`` from the table under SECTION."""
    text = DOC.read_text()
    assert SECTION in text, f"docs/api.md has no {SECTION!r} section"
    table = text.split(SECTION, 1)[1].split("\n#", 1)[0]
    out: dict[Diff, str] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        operation, kind, names, reason = cells
        assert reason, f"no reason given for {operation} {kind}"
        for name in re.findall(r"`([^`]+)`", names) or [names]:
            out[(operation.strip("`"), kind, name)] = reason
    return out


def test_api_v2_matches_airflows_openapi_but_for_listed_differences(
        airflow_client: Path, tmp_path: Path) -> None:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path)})
    ours = create_app(create_engine("sqlite://"), settings).openapi()
    theirs = airflow_openapi(airflow_client)
    served = [p for p in ours["paths"] if p.startswith("/api/v2/")]
    assert len(served) >= 20
    found = set(operation_diffs(ours, theirs, "/api/v2/"))
    listed = listed_differences()
    unlisted = sorted(found - set(listed))
    assert not unlisted, "differences from Airflow not listed in docs/api.md:\n" + "\n".join(
        " | ".join(d) for d in unlisted)
    stale = sorted(set(listed) - found)
    assert not stale, "docs/api.md lists differences that are gone:\n" + "\n".join(
        " | ".join(d) for d in stale)


def test_the_token_route_is_airflows(airflow_client: Path, tmp_path: Path) -> None:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path)})
    op = create_app(create_engine("sqlite://"), settings).openapi()["paths"]["/auth/token"]
    assert "post" in op and "201" in op["post"]["responses"]
    assert op["post"]["x-permission"] == "public"
