"""The files Airflow's ``connections export`` and ``variables export`` write, read and written.

Formats, by the file's extension: ``.json`` (an object keyed by conn_id or variable key),
``.yaml``/``.yml`` (the same object), ``.env`` (one ``KEY=VALUE`` a line; ``#`` comments and
blank lines skipped). A connection is a URI or the JSON form (an object); a variable is a string,
any JSON value (stored as its JSON text), or ``{"value": ..., "description": ...}``.

Reading checks the whole file first: every problem is reported with its line (or key), and a
file with any problem imports nothing (:class:`FileParseError`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from statewright.core.errors import StatewrightError
from statewright.sdk.connection import Connection, InvalidConnection

__all__ = [
    "FORMATS",
    "FileParseError",
    "VariableValue",
    "dump_connections",
    "dump_variables",
    "read_connections",
    "read_variables",
]

FORMATS = ("json", "yaml", "yml", "env")


@dataclass(frozen=True)
class Problem:
    where: str
    """``line N`` or ``key K``."""
    message: str


class FileParseError(StatewrightError):
    def __init__(self, path: str, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  {p.where}: {p.message}" for p in problems)
        super().__init__(f"{path}: {len(problems)} problem(s); nothing was imported:\n{lines}")


@dataclass(frozen=True)
class VariableValue:
    value: str
    description: str | None = None


def _format(path: str) -> str:
    ext = Path(path).suffix.lstrip(".").lower()
    if ext not in FORMATS:
        raise FileParseError(path, [Problem("file", (
            "Unsupported file format. The file must have one of the following extensions: "
            + " ".join(f".{e}" for e in sorted(FORMATS))))])
    return "yaml" if ext == "yml" else ext


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileParseError(path, [Problem("file", "the file does not exist")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FileParseError(path, [Problem("file", f"cannot be read: {exc}")]) from None


def _parse(path: str) -> tuple[str, dict[str, Any], dict[str, int]]:
    """(format, {key: value}, {key: line}); env values are lists (duplicates are problems)."""
    fmt = _format(path)
    text = _read(path)
    if fmt == "env":
        return fmt, *_parse_env(path, text)
    if not text.strip():
        raise FileParseError(path, [Problem("line 1", "The file is empty.")])
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FileParseError(path, [Problem(f"line {exc.lineno}", exc.msg)]) from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc)
            raise FileParseError(path, [Problem(f"line {line}", str(problem))]) from None
    if not isinstance(data, dict):
        raise FileParseError(path, [Problem("line 1", "The file should contain the object.")])
    return fmt, {str(k): v for k, v in data.items()}, _key_lines(text)


def _key_lines(text: str) -> dict[str, int]:
    """Best effort: the line where each top-level key first appears (for messages)."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip().lstrip("{").strip()
        for quote in ('"', "'", ""):
            if stripped.startswith(quote):
                key = stripped[len(quote):].split(quote if quote else ":", 1)[0]
                if key and key not in lines:
                    lines[key] = number
                break
    return lines


def _parse_env(path: str, text: str) -> tuple[dict[str, Any], dict[str, int]]:
    values: dict[str, list[str]] = defaultdict(list)
    lines: dict[str, int] = {}
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep:
            problems.append(Problem(f"line {number}", 'Invalid line format. The line should '
                                    'contain at least one equal sign ("=").'))
        elif not key:
            problems.append(Problem(f"line {number}", "Invalid line format. Key is empty."))
        elif not value:
            problems.append(Problem(f"line {number}", "Invalid line format. Value is empty."))
        else:
            if key in values:
                problems.append(Problem(f"line {number}", f"{key!r} is defined again (first "
                                        f"on line {lines[key]})"))
            values[key].append(value)
            lines.setdefault(key, number)
    if problems:
        raise FileParseError(path, problems)
    return {k: v[0] for k, v in values.items()}, lines


def _where(key: str, lines: dict[str, int]) -> str:
    return f"line {lines[key]} ({key})" if key in lines else f"key {key!r}"


def read_connections(path: str) -> dict[str, Connection]:
    """Every connection of the file; raises :class:`FileParseError` listing every problem."""
    _, data, lines = _parse(path)
    connections: dict[str, Connection] = {}
    problems: list[Problem] = []
    for conn_id, value in data.items():
        try:
            if isinstance(value, str):
                conn = Connection.from_uri_or_json(conn_id, value)
            elif isinstance(value, dict):
                conn = Connection.from_json(value, conn_id=conn_id)
            else:
                raise InvalidConnection(f"connection {conn_id!r}: a connection is a URI or an "
                                        f"object, got {type(value).__name__}")
            if not conn.conn_type:
                raise InvalidConnection(f"connection {conn_id!r} has no conn_type")
            connections[conn_id] = conn
        except InvalidConnection as exc:
            problems.append(Problem(_where(conn_id, lines), str(exc)))
    if problems:
        raise FileParseError(path, problems)
    return connections


def read_variables(path: str) -> dict[str, VariableValue]:
    """Every variable of the file; raises :class:`FileParseError` listing every problem."""
    fmt, data, lines = _parse(path)
    out: dict[str, VariableValue] = {}
    problems: list[Problem] = []
    for key, value in data.items():
        description = None
        if isinstance(value, dict) and "value" in value:
            extra = sorted(set(value) - {"value", "description"})
            if extra:
                problems.append(Problem(_where(key, lines), f"unknown field(s) {extra}; a "
                                        "variable object has value and description"))
                continue
            value, description = value["value"], value.get("description")
        if value is None:
            problems.append(Problem(_where(key, lines), "the value is empty (null)"))
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        out[key] = VariableValue(text, None if description is None else str(description))
    del fmt
    if problems:
        raise FileParseError(path, problems)
    return out


def dump_connections(connections: list[Connection], file_format: str,
                     serialization_format: str = "uri") -> str:
    """The text Airflow's ``connections export`` writes."""
    if file_format == "env":
        if serialization_format == "json":
            lines = [f"{c.conn_id}={json.dumps(c.to_dict())}" for c in connections]
        else:
            lines = [f"{c.conn_id}={c.get_uri()}" for c in connections]
        return "\n".join(lines) + ("\n" if lines else "")
    data = {c.conn_id: c.to_dict() for c in connections}
    if file_format == "json":
        return json.dumps(data, indent=2) + "\n"
    return str(yaml.safe_dump(data, sort_keys=False))


def dump_variables(variables: list[tuple[str, str | None, str | None]]) -> str:
    """The JSON Airflow's ``variables export`` writes, from (key, value, description)."""
    out: dict[str, Any] = {}
    for key, text, description in variables:
        value: Any = text
        try:
            decoded = json.loads(text) if text is not None else None
        except json.JSONDecodeError:
            decoded = text
        if not isinstance(decoded, str):
            value = decoded
        if description or (isinstance(value, dict) and "value" in value):
            out[key] = {"value": value, "description": description}
        else:
            out[key] = value
    return json.dumps(out, sort_keys=True, indent=4) + "\n"
