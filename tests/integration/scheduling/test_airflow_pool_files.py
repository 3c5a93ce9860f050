"""`pools import` of the file `airflow pools export` writes (made by Airflow 3.1's CLI), and
`pools export` in the same format; a malformed file imports nothing and names each cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine

from statewright.cli.main import cli
from statewright.compat.airflow.pools import PoolFileError, parse_pool_export
from statewright.db.repositories import pools as pool_repo

AIRFLOW_EXPORT = Path(__file__).parents[2] / "fixtures" / "airflow_exports" / "pools.json"


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def pools(engine: Engine) -> dict[str, tuple[int, str | None, bool]]:
    with engine.connect() as conn:
        return {r.name: (int(r.slots), r.description, bool(r.include_deferred))
                for r in pool_repo.list_all(conn)}


def test_import_airflows_export_then_export_it_back(
        cli_env: dict[str, str], engine: Engine, tmp_path: Path) -> None:
    assert run(cli_env, "pools", "set", "etl", "1").exit_code == 0
    result = run(cli_env, "pools", "import", str(AIRFLOW_EXPORT))
    assert result.exit_code == 0, result.output
    assert "3 pool(s) imported" in result.output and "2 created, 1 updated" in result.output
    assert pools(engine) == {"default_pool": (128, "Default pool", False),
                             "etl": (4, "the ETL box", False),
                             "reporting": (2, "reports", True)}
    out = tmp_path / "out.json"
    assert run(cli_env, "pools", "export", str(out)).exit_code == 0
    assert json.loads(out.read_text()) == json.loads(AIRFLOW_EXPORT.read_text())
    printed = run(cli_env, "pools", "export", "-")
    assert json.loads(printed.output) == json.loads(AIRFLOW_EXPORT.read_text())


@pytest.mark.parametrize("content, cause", [
    ("{not json", "not valid JSON"),
    ('["etl", 4]', "expected a JSON object of pool name"),
    ('{"ok": {"slots": 3, "description": "fine"}, "etl": {"description": "no slots"}}',
     "pool 'etl': slots is missing"),
    ('{"etl": {"slots": "four", "description": ""}}', "slots must be a whole number"),
    ('{"etl": {"slots": -1, "description": ""}}', "-1 (unlimited in Airflow)"),
    ('{"etl": {"slots": 2, "description": "", "include_deferred": "yes"}}',
     "include_deferred must be true or false"),
    ('{"etl": {"slots": 2, "descrption": "typo"}}', "unknown key(s) descrption"),
    ('{"etl": 4}', "expected an object with slots and description"),
])
def test_a_malformed_file_imports_nothing_and_names_the_cause(
        cli_env: dict[str, str], engine: Engine, tmp_path: Path, content: str,
        cause: str) -> None:
    path = tmp_path / "pools.json"
    path.write_text(content)
    result = run(cli_env, "pools", "import", str(path))
    assert result.exit_code == 1
    assert "nothing was imported" in result.output and cause in " ".join(result.output.split())
    assert set(pools(engine)) <= {"default_pool"}


def test_every_bad_entry_is_listed_at_once() -> None:
    with pytest.raises(PoolFileError) as caught:
        parse_pool_export('{"a": {"slots": -5}, "b": {"slots": 1}, "": {"slots": 1}}', "f.json")
    assert caught.value.problems == [
        "pool 'a': slots must be a whole number of 0 or more, got -5",
        "pool '': a pool name must be 1 to 256 characters long",
    ]
    assert str(caught.value).startswith("f.json: nothing was imported")


def test_a_missing_file_is_a_clear_error(cli_env: dict[str, str], tmp_path: Path) -> None:
    result = run(cli_env, "pools", "import", str(tmp_path / "nope.json"))
    assert result.exit_code == 1 and "cannot read" in result.output
