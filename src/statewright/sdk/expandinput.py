"""What a mapped task maps over (Airflow's ``expandinput.py``) and ``XComArg.map/zip/concat``.

``DictOfListsExpandInput`` is ``.expand(x=[...], y=upstream)``: one task instance per combination
of the arguments' items (their cross product, the last argument varying fastest).
``ListOfDictsExpandInput`` is ``.expand_kwargs(...)``: one task instance per dict of keyword
arguments. A source is a literal list or dict (a dict maps as its ``(key, value)`` pairs) or a
task's output (``XComArg``), possibly transformed by ``.map(fn)``, ``.zip(...)`` or
``.concat(...)``.

``serialize()`` gives the plain data the scheduler counts lengths from
(:mod:`statewright.core.mapping`); ``resolve(context, map_index)`` gives one task instance's
keyword arguments at run time. An expand input does not know which task carries it, so a group of
tasks can share one (a mapped task group).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.mapping import MappingError, index_in_product, value_length
from statewright.sdk.xcom_arg import (
    XComArg,
    has_references,
    iter_xcom_args,
    resolve_references,
)

__all__ = [
    "ConcatXComArg",
    "DictOfListsExpandInput",
    "LazyXComSequence",
    "ListOfDictsExpandInput",
    "MapXComArg",
    "ZipXComArg",
]

_NOTSET: Any = object()


class LazyXComSequence(list[Any]):
    """The values of a mapped task's instances in map-index order (Airflow's
    ``LazyXComSequence``). The task process holds no database session, so the values come with
    the try's workload; instances that stored nothing are left out."""

    by_map_index: dict[int, Any]

    @classmethod
    def from_pairs(cls, pairs: Sequence[Sequence[Any]]) -> LazyXComSequence:
        """From ``[map index, value]`` pairs in map-index order."""
        out = cls(value for _, value in pairs)
        out.by_map_index = {int(m): value for m, value in pairs}
        return out

    def at(self, map_index: int, default: Any = None) -> Any:
        """The value of the instance of ``map_index`` (``default`` if it stored none)."""
        return getattr(self, "by_map_index", dict(enumerate(self))).get(map_index, default)


def _items(value: Any) -> list[Any]:
    """A mappable value as the list of its items (a dict: its ``(key, value)`` pairs)."""
    if isinstance(value, dict):
        return list(value.items())
    return list(value)


class _DerivedXComArg(XComArg):
    """An XComArg computed from others at run time; depends on all their tasks."""

    def __init__(self, args: Sequence[XComArg]) -> None:
        super().__init__(args[0].operator)
        self.args = list(args)

    def __getitem__(self, key: str) -> XComArg:
        raise TypeError(f"{self!r} cannot be indexed; index the value inside the consuming task")

    @property
    def roots(self) -> list[Any]:
        return [op for a in self.args for op in a.roots]

    @property
    def leaves(self) -> list[Any]:
        return [op for a in self.args for op in a.leaves]

    def _resolved(self, context: Mapping[str, Any]) -> list[list[Any]]:
        out = []
        for arg in self.args:
            value = arg.resolve(context)
            value_length(value, _where(arg))
            out.append(_items(value))
        return out


class MapXComArg(_DerivedXComArg):
    """``output.map(fn)``: ``fn`` applied to each item when the consumer runs (same length)."""

    def __init__(self, arg: XComArg, callables: Sequence[Callable[[Any], Any]]) -> None:
        super().__init__([arg])
        self.callables = list(callables)

    def __repr__(self) -> str:
        return f"{self.args[0]!r}.map({', '.join(map(_name, self.callables))})"

    def map(self, f: Callable[[Any], Any]) -> MapXComArg:
        return MapXComArg(self.args[0], [*self.callables, _check_callable(f, "map")])

    def resolve(self, context: Mapping[str, Any]) -> list[Any]:
        items = self._resolved(context)[0]
        for f in self.callables:
            items = [f(item) for item in items]
        return items

    def serialize(self) -> dict[str, Any]:
        return {"kind": "map", "arg": serialize_source(self.args[0])}


class ZipXComArg(_DerivedXComArg):
    """``a.zip(b, c)``: tuples of the i-th items; as long as the shortest, or the longest
    with ``fillvalue`` standing in for missing items."""

    def __init__(self, args: Sequence[XComArg], fillvalue: Any = _NOTSET) -> None:
        super().__init__(args)
        self.fillvalue = fillvalue

    def __repr__(self) -> str:
        return f"{self.args[0]!r}.zip({', '.join(map(repr, self.args[1:]))})"

    def resolve(self, context: Mapping[str, Any]) -> list[Any]:
        lists = self._resolved(context)
        if self.fillvalue is _NOTSET:
            return [tuple(t) for t in zip(*lists, strict=False)]
        longest = max((len(v) for v in lists), default=0)
        return [tuple(v[i] if i < len(v) else self.fillvalue for v in lists)
                for i in range(longest)]

    def serialize(self) -> dict[str, Any]:
        return {"kind": "zip", "args": [serialize_source(a) for a in self.args],
                "fill": self.fillvalue is not _NOTSET}


class ConcatXComArg(_DerivedXComArg):
    """``a.concat(b, c)``: the items of ``a``, then of ``b``, then of ``c``."""

    def __repr__(self) -> str:
        return f"{self.args[0]!r}.concat({', '.join(map(repr, self.args[1:]))})"

    def resolve(self, context: Mapping[str, Any]) -> list[Any]:
        return [item for items in self._resolved(context) for item in items]

    def serialize(self) -> dict[str, Any]:
        return {"kind": "concat", "args": [serialize_source(a) for a in self.args]}


def _check_callable(f: Any, what: str) -> Callable[[Any], Any]:
    if not callable(f):
        raise DagDefinitionError(f"XComArg.{what}() takes a callable, got {f!r}.")
    return f  # type: ignore[no-any-return]


def _check_xcom_args(others: Sequence[Any], what: str) -> list[XComArg]:
    for other in others:
        if not isinstance(other, XComArg):
            raise DagDefinitionError(
                f"XComArg.{what}() takes the outputs of other tasks, got {other!r}.")
    return list(others)


def xcom_map(arg: XComArg, f: Callable[[Any], Any]) -> XComArg:
    return MapXComArg(arg, [_check_callable(f, "map")])


def xcom_zip(arg: XComArg, *others: XComArg, fillvalue: Any = _NOTSET) -> XComArg:
    return ZipXComArg([arg, *_check_xcom_args(others, "zip")], fillvalue)


def xcom_concat(arg: XComArg, *others: XComArg) -> XComArg:
    return ConcatXComArg([arg, *_check_xcom_args(others, "concat")])


def _name(f: Any) -> str:
    return getattr(f, "__name__", repr(f))


def _where(arg: XComArg) -> str:
    item = f"[{arg.key!r}]" if arg.key is not None else ""
    return f"the output of upstream task {arg.operator.task_id!r}{item}"


def serialize_source(value: Any) -> dict[str, Any]:
    """One source of an expand input as plain data (see :mod:`statewright.core.mapping`)."""
    if isinstance(value, (MapXComArg, ZipXComArg, ConcatXComArg)):
        return value.serialize()
    if isinstance(value, XComArg):
        return {"kind": "xcom", "task_id": value.operator.task_id, "key": value.key}
    return {"kind": "literal", "length": len(value)}


def _resolve_source(value: Any, context: Mapping[str, Any], plain: bool = False
                    ) -> Sequence[Any]:
    """The items of one source in this run. ``plain``: a literal without references, whose
    list or tuple is indexed as it is (no copy per task instance)."""
    if isinstance(value, XComArg):
        resolved = value.resolve(context)
        try:
            value_length(resolved, _where(value))
        except MappingError as exc:
            raise TypeError(str(exc)) from None
        return _items(resolved)
    if plain and isinstance(value, (list, tuple)):
        return value
    return _items(value if plain else resolve_references(value, context))


def _check_source(name: str, value: Any, where: str) -> None:
    if isinstance(value, XComArg):
        return
    if not isinstance(value, (list, tuple, dict)):
        raise DagDefinitionError(
            f"{where}: expand() got a {type(value).__name__} for argument {name!r}; map over "
            "a list, a dict or the output of a task")


class DictOfListsExpandInput:
    """``.expand(**mapped)``: the cross product of the arguments' items."""

    kind = "dict"

    def __init__(self, value: Mapping[str, Any], where: str) -> None:
        if not value:
            raise DagDefinitionError(f"{where}: expand() needs at least one argument to map.")
        for name, source in value.items():
            _check_source(name, source, where)
        self.value = dict(value)
        self._plain = {name: not isinstance(v, XComArg) and not has_references(v)
                       for name, v in self.value.items()}

    def iter_references(self) -> Iterator[XComArg]:
        for source in self.value.values():
            yield from iter_xcom_args(source)

    def names(self) -> list[str]:
        return list(self.value)

    def serialize(self) -> dict[str, Any]:
        return {"type": self.kind,
                "value": {k: serialize_source(v) for k, v in self.value.items()}}

    def resolve(self, context: Mapping[str, Any], map_index: int) -> dict[str, Any]:
        items = {name: _resolve_source(v, context, self._plain[name])
                 for name, v in self.value.items()}
        positions = index_in_product(map_index, [len(v) for v in items.values()])
        return {name: values[i] for (name, values), i in zip(items.items(), positions,
                                                                 strict=True)}


class ListOfDictsExpandInput:
    """``.expand_kwargs(list_or_output)``: one task instance per dict of keyword arguments."""

    kind = "list"

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, (XComArg, list, tuple)):
            raise DagDefinitionError(
                f"{where}: expand_kwargs() takes a list of dicts or the output of a task, got "
                f"a {type(value).__name__}.")
        if not isinstance(value, XComArg):
            for item in value:
                if not isinstance(item, (dict, XComArg)):
                    raise DagDefinitionError(
                        f"{where}: expand_kwargs() takes a list of dicts; one item is a "
                        f"{type(item).__name__} ({item!r}).")
        self.value = value

    def iter_references(self) -> Iterator[XComArg]:
        yield from iter_xcom_args(self.value)

    def names(self) -> list[str]:
        if isinstance(self.value, XComArg):
            return []
        return sorted({k for item in self.value if isinstance(item, dict) for k in item})

    def serialize(self) -> dict[str, Any]:
        return {"type": self.kind, "value": serialize_source(self.value)}

    def resolve(self, context: Mapping[str, Any], map_index: int) -> dict[str, Any]:
        item = _resolve_source(self.value, context)[map_index]
        if not isinstance(item, Mapping) or not all(isinstance(k, str) for k in item):
            where = _where(self.value) if isinstance(self.value, XComArg) else "the list"
            raise TypeError(
                f"expand_kwargs: item {map_index} of {where} is a {type(item).__name__}, not a "
                "dict of keyword arguments")
        return dict(item)
