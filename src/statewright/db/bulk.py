"""Fast inserts of many rows: one statement, each distinct typed value bound once, executemany.

SQLAlchemy's per-row parameter processing costs more than SQLite's own insert of a row. For
batches of thousands of rows (the task instances of a thousand new runs) ``insert_many`` writes
the ``INSERT`` once, converts each distinct value of a typed column (datetimes, JSON) once
through the column type's own bind processor, and hands plain tuples to the DBAPI cursor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Dialect, String, Table
from sqlalchemy.exc import DBAPIError

__all__ = ["chunks", "insert_many", "update_many"]


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``size`` (for ``IN (…)`` lists)."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


def insert_many(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    constants: Mapping[str, Any] | None = None,
    *,
    update_on: Sequence[str] = (),
) -> int:
    """Insert ``rows`` (tuples in ``columns`` order) plus ``constants`` (the same in every row).

    Columns left out get their scalar Python default, as with ``insert(table)``. With
    ``update_on`` (the columns of a unique key), a row whose key exists updates the other
    columns instead (``ON CONFLICT … DO UPDATE``). Returns the number of rows.
    """
    consts = dict(constants or {})
    for k, v in _scalar_defaults(table):
        if k not in consts and k not in columns:
            consts[k] = v
    const_values = tuple(_processor(conn, table, k)(v) for k, v in consts.items())
    sqlite = conn.dialect.name == "sqlite"
    # SQLite: constants go into the statement as literals, so each row binds only its own.
    literals = {k: _sql_literal(v) for k, v in zip(consts, const_values, strict=True)} \
        if sqlite else {}
    inline: dict[str, str] = {k: v for k, v in literals.items() if v is not None}
    bound = tuple(v for k, v in zip(consts, const_values, strict=True) if k not in inline)
    converters = [(i, _processor(conn, table, k)) for i, k in enumerate(columns)]
    typed = [(i, p) for i, p in converters if p is not _identity]
    params: list[Sequence[Any]]
    if typed:
        memo: dict[tuple[int, Any], Any] = {}
        params = []
        for row in rows:
            values = list(row)
            for i, proc in typed:
                values[i] = _convert(proc, i, values[i], memo)
            params.append((*values, *bound))
    elif bound:
        params = [(*row, *bound) for row in rows]
    else:
        params = rows if isinstance(rows, list) else list(rows)
    if not params:
        return 0
    quote = conn.dialect.identifier_preparer.quote
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    names = [*columns, *(k for k in consts if k not in inline), *inline]
    slots = [marker] * (len(names) - len(inline)) + list(inline.values())
    head = f"INSERT INTO {quote(table.name)} ({', '.join(quote(n) for n in names)}) VALUES "
    one = f"({', '.join(slots)})" + _on_conflict(quote, names, update_on)
    if sqlite:
        conn.exec_driver_sql(head + one, params)  # executemany runs in C: fastest here
        return len(params)
    if conn.dialect.name == "postgresql" and len(params) > 50 and not update_on:
        # COPY streams the rows in one round trip, inside the connection's transaction.
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        copy_sql = f"COPY {quote(table.name)} ({', '.join(quote(n) for n in names)}) FROM STDIN"
        dbapi_error = conn.dialect.loaded_dbapi.Error
        try:
            with cursor.copy(copy_sql) as copy:
                for row in params:
                    copy.write_row(row)
        except dbapi_error as exc:  # the driver's own: raised as SQLAlchemy raises the others
            raise DBAPIError.instance(copy_sql, None, exc, dbapi_error,
                                      dialect=conn.dialect) from exc
        finally:
            cursor.close()
        return len(params)
    if conn.dialect.name == "postgresql":
        # A few rows: one execution of one statement text (prepared by the driver once it has
        # run a few times) with a column's values as one array each, where an executemany
        # costs the server an execution and the client a bound row per row.
        arrays = tuple(list(column) for column in zip(*params, strict=True))
        conn.exec_driver_sql(_unnest_insert(conn, table, tuple(names), tuple(update_on)),
                             arrays)
        return len(params)
    conn.exec_driver_sql(head + one, params)
    return len(params)


_unnest_texts: dict[tuple[str, tuple[str, ...], tuple[str, ...]], str] = {}


def _unnest_insert(conn: Connection, table: Table, names: tuple[str, ...],
                   update_on: tuple[str, ...]) -> str:
    """``INSERT INTO table (names) SELECT * FROM unnest(%b::type[], …)`` (PostgreSQL)."""
    key = (table.name, names, update_on)
    text = _unnest_texts.get(key)
    if text is None:
        quote = conn.dialect.identifier_preparer.quote
        # In binary (``%b``): the driver packs each array without quoting its elements, and
        # the server reads it without parsing text (half the client's cost of a batch's row).
        arrays = ", ".join(f"%b::{_element_type(table, n, conn.dialect)}[]" for n in names)
        text = _unnest_texts.setdefault(key, (
            f"INSERT INTO {quote(table.name)} ({', '.join(quote(n) for n in names)}) "
            f"SELECT * FROM unnest({arrays})" + _on_conflict(quote, names, update_on)))
    return text


def _element_type(table: Table, name: str, dialect: Dialect) -> str:
    """The type an array of ``name``'s values is cast to: the column's, a string's without its
    length. A cast to ``VARCHAR(n)`` would cut a longer value without a word; the insert's own
    conversion to the column refuses it, as ``COPY`` and a plain ``INSERT`` do."""
    typ = table.c[name].type
    if type(typ) is String and typ.length is not None:
        typ = String()
    return str(typ.compile(dialect=dialect))


def _on_conflict(quote: Callable[[str], str], names: Sequence[str],
                 update_on: Sequence[str]) -> str:
    """`` ON CONFLICT (key) DO UPDATE SET`` every other column (SQLite and PostgreSQL)."""
    if not update_on:
        return ""
    sets = ", ".join(f"{quote(n)} = excluded.{quote(n)}" for n in names if n not in update_on)
    return f" ON CONFLICT ({', '.join(quote(k) for k in update_on)}) DO UPDATE SET {sets}"


def update_many(
    conn: Connection,
    table: Table,
    key: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
) -> int:
    """``UPDATE table SET columns… WHERE key = …`` for each row (``(key value, *column values)``).

    Not for state columns: those change through ``statewright.db.transition`` only.
    """
    converters = [_processor(conn, table, k) for k in (key, *columns)]
    memo: dict[tuple[int, Any], Any] = {}
    params = [tuple(_convert(p, i, v, memo) for i, (p, v) in enumerate(
        zip(converters, row, strict=True))) for row in rows]
    if not params:
        return 0
    quote = conn.dialect.identifier_preparer.quote
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sets = ", ".join(f"{quote(c)} = {marker}" for c in columns)
    sql = f"UPDATE {quote(table.name)} SET {sets} WHERE {quote(key)} = {marker}"
    conn.exec_driver_sql(sql, [(*p[1:], p[0]) for p in params])
    return len(params)


@functools.lru_cache(maxsize=256)
def _scalar_defaults(table: Table) -> tuple[tuple[str, Any], ...]:
    """The table's columns with a scalar Python default, and that default."""
    return tuple((c.key, getattr(c.default, "arg", None)) for c in table.c
                 if c.default is not None and getattr(c.default, "is_scalar", False))


def _sql_literal(value: Any) -> str | None:
    """``value`` written as an SQL literal, or None when it is better bound."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return None


def _identity(value: Any) -> Any:
    return value


def _processor(conn: Connection, table: Table, key: str) -> Callable[[Any], Any]:
    return _processor_of(conn.dialect, table, key)


@functools.lru_cache(maxsize=1024)
def _processor_of(dialect: Dialect, table: Table, key: str) -> Callable[[Any], Any]:
    """A column's bind processor (built once: building it costs more than a few rows)."""
    typ = table.c[key].type.dialect_impl(dialect)
    proc: Callable[[Any], Any] | None = typ.bind_processor(dialect)
    return proc or _identity


def _convert(proc: Callable[[Any], Any], i: int, value: Any,
             memo: dict[tuple[int, Any], Any]) -> Any:
    try:
        key = (i, value)
        if key in memo:
            return memo[key]
    except TypeError:  # dicts and lists (JSON) are not hashable: convert each one
        return proc(value)
    memo[key] = converted = proc(value)
    return converted
