"""Differences between two OpenAPI documents, operation by operation: parameters (names,
required), request body fields (names, required), the success answer's status and fields
(names, required). Each difference is ``(operation, kind, name)``."""

from __future__ import annotations

from typing import Any

Diff = tuple[str, str, str]


def _resolve(doc: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    schema = schema or {}
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].split("/")[-1]]
    return schema


def _fields(doc: dict[str, Any], schema: dict[str, Any] | None) -> tuple[set[str], set[str]]:
    """Property names and required names of an object schema (anyOf/oneOf: the union)."""
    schema = _resolve(doc, schema)
    variants = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if variants:
        names: set[str] = set()
        required: set[str] = set()
        for v in variants:
            n, r = _fields(doc, v)
            names |= n
            required |= r
        return names, required
    return set(schema.get("properties", {})), set(schema.get("required", []))


def _success(op: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    code = next(c for c in sorted(op["responses"]) if c.startswith("2"))
    content = op["responses"][code].get("content", {}).get("application/json", {})
    return code, content.get("schema")


def _compare(kind: str, label: str, ours: tuple[set[str], set[str]],
             theirs: tuple[set[str], set[str]]) -> list[Diff]:
    out = [(label, f"{kind} not served", n) for n in sorted(theirs[0] - ours[0])]
    out += [(label, f"{kind} extra", n) for n in sorted(ours[0] - theirs[0])]
    out += [(label, f"{kind} required differs", n)
            for n in sorted((ours[1] ^ theirs[1]) & ours[0] & theirs[0])]
    return out


def _params(op: dict[str, Any]) -> tuple[set[str], set[str]]:
    ps = [p for p in op.get("parameters", []) if p["in"] in ("query", "path")]
    return {p["name"] for p in ps}, {p["name"] for p in ps if p.get("required")}


def operation_diffs(ours: dict[str, Any], theirs: dict[str, Any], prefix: str) -> list[Diff]:
    """Every difference of the operations ``ours`` serves under ``prefix``."""
    diffs: list[Diff] = []
    for path, item in ours["paths"].items():
        if not path.startswith(prefix):
            continue
        for method, op in item.items():
            label = f"{method.upper()} {path}"
            other = theirs["paths"].get(path, {}).get(method)
            if other is None:
                diffs.append((label, "operation not in Airflow", "-"))
                continue
            diffs += _compare("parameter", label, _params(op), _params(other))
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            body_theirs = other.get("requestBody", {}).get("content", {}).get(
                "application/json", {})
            diffs += _compare("body field", label, _fields(ours, body.get("schema")),
                              _fields(theirs, body_theirs.get("schema")))
            code, schema = _success(op)
            code_theirs, schema_theirs = _success(other)
            if code != code_theirs:
                diffs.append((label, "success status differs", f"{code} vs {code_theirs}"))
            diffs += _compare("response field", label, _fields(ours, schema),
                              _fields(theirs, schema_theirs))
    return diffs
