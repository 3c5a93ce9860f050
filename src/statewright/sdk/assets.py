"""Assets (Airflow 3's data-aware scheduling): ``Asset``, ``AssetAlias``, conditions, watchers.

A task lists the assets it updates in ``outlets=[...]``; when a try succeeds, one asset event per
outlet is recorded with the state change. A DAG with ``schedule=[a, b]``, ``a & b``,
``a | (b & c)`` or ``AssetOrTimeSchedule(...)`` gets a run of type ``asset_triggered`` when its
condition is met by new events. ``AssetWatcher(name, trigger=...)`` turns an external event (a
file appearing, a message on a Redis stream) into an asset event through the triggerer.

While a try runs, the context carries ``outlet_events`` (set ``outlet_events[asset].extra``, or
``outlet_events[alias].add(asset)``), ``inlet_events`` (the recent events of the task's
``inlets``) and ``triggering_asset_events`` (the events that started an asset-triggered run).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from statewright.core.asset_conditions import (
    AssetDefinitionError,
    describe_condition,
    sanitize_uri,
    validate_asset_name,
    validate_identifier,
)
from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import Timetable, parse_schedule, serialize_timetable
from statewright.sdk.asset_access import check_access_control

__all__ = [
    "Asset",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetEvent",
    "AssetNameRef",
    "AssetOrTimeSchedule",
    "AssetWatcher",
    "InletEventsAccessors",
    "OutletEventAccessor",
    "OutletEventAccessors",
    "TriggeringAssetEventsAccessor",
    "asset_schedule",
    "is_asset_schedule",
    "serialize_assets",
]


class BaseAsset:
    """What can be combined with ``&`` and ``|`` into a schedule condition."""

    def as_condition(self) -> dict[str, Any]:
        raise NotImplementedError

    def __and__(self, other: object) -> AssetAll:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        return AssetAll(self, other)

    def __or__(self, other: object) -> AssetAny:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        return AssetAny(self, other)


def _check_extra(extra: Any, what: str) -> dict[str, Any]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        raise AssetDefinitionError(f"{what}: extra must be a dict, got {type(extra).__name__}.")
    try:
        stored: dict[str, Any] = json.loads(json.dumps(dict(extra), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise AssetDefinitionError(f"{what}: extra must be plain JSON data ({exc}).") from None
    return stored


class AssetWatcher:
    """Watches an external system for an asset: the triggerer runs ``trigger`` continuously and
    each event it yields becomes an event of the asset (``Asset(..., watchers=[...])``)."""

    def __init__(self, name: str, trigger: Any) -> None:
        from statewright.sdk.triggers.base import BaseTrigger

        self.name = validate_identifier(name, "AssetWatcher name")
        if not isinstance(trigger, BaseTrigger):
            raise AssetDefinitionError(
                f"AssetWatcher {name!r}: trigger must be a trigger (a BaseTrigger subclass such "
                f"as FileAssetTrigger or RedisStreamTrigger), got {type(trigger).__name__}.")
        self.trigger = trigger

    def serialize(self) -> dict[str, Any]:
        from statewright.sdk import serde

        classpath, kwargs = self.trigger.serialize()
        return {"name": self.name, "classpath": classpath,
                "kwargs": serde.serialize(kwargs, path=f"AssetWatcher {self.name!r} kwargs")}

    def __repr__(self) -> str:
        return f"AssetWatcher({self.name!r}, trigger={self.trigger!r})"


class Asset(BaseAsset):
    """A piece of data tasks update and DAGs are scheduled on.

    ``Asset("s3://bucket/key")`` names the asset by its URI; ``Asset(name="orders",
    uri="s3://b/orders")`` gives both. The URI is validated and normalised as in Airflow.
    """

    def __init__(self, name: str | None = None, uri: str | None = None, *,
                 group: str | None = None, extra: Mapping[str, Any] | None = None,
                 watchers: Sequence[AssetWatcher] | None = None,
                 access_control: Any = None) -> None:
        if name is None and uri is None:
            raise TypeError("Asset() requires either 'name' or 'uri'")
        if name is None:
            name = str(uri)
        elif uri is None:
            uri = name
        self.name = validate_asset_name(name)
        self.uri = sanitize_uri(uri)
        self.group = validate_identifier(group if group is not None else "asset", "Asset group")
        self.extra = _check_extra(extra, f"Asset {self.name!r}")
        self.access_control = check_access_control(access_control, f"Asset {self.name!r}")
        self.watchers = list(watchers or [])
        for watcher in self.watchers:
            if not isinstance(watcher, AssetWatcher):
                raise AssetDefinitionError(
                    f"Asset {self.name!r}: watchers must be AssetWatcher objects, got "
                    f"{type(watcher).__name__}.")

    def as_condition(self) -> dict[str, Any]:
        return {"asset": {"name": self.name, "uri": self.uri}}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "uri": self.uri, "group": self.group, "extra": self.extra,
                "watchers": [w.serialize() for w in self.watchers]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Asset):
            return NotImplemented
        return (self.name, self.uri, self.group) == (other.name, other.uri, other.group)

    def __hash__(self) -> int:
        return hash((self.name, self.uri))

    def __fspath__(self) -> str:
        return self.uri

    @staticmethod
    def ref(*, name: str = "") -> AssetNameRef:
        """A reference to the asset named ``name`` (defined by another DAG)."""
        if not name:
            raise TypeError("Asset reference expects keyword argument 'name'")
        return AssetNameRef(name)

    def __repr__(self) -> str:
        if self.name == self.uri:
            return f"Asset({self.uri!r})"
        return f"Asset(name={self.name!r}, uri={self.uri!r})"


class AssetNameRef(BaseAsset):
    """An asset named only (``Asset.ref(name=...)``): its URI is whatever the DAG that defines
    it says."""

    def __init__(self, name: str) -> None:
        self.name = validate_asset_name(name)

    def as_condition(self) -> dict[str, Any]:
        return {"asset": {"name": self.name, "uri": self.name}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AssetNameRef) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ref", self.name))

    def __repr__(self) -> str:
        return f"Asset.ref(name={self.name!r})"


class AssetAlias(BaseAsset):
    """A name a task resolves to concrete assets at run time
    (``outlet_events[AssetAlias("x")].add(Asset(...))``)."""

    def __init__(self, name: str, *, group: str = "asset") -> None:
        self.name = validate_identifier(name, "AssetAlias name")
        self.group = validate_identifier(group, "AssetAlias group", allow_empty=True)

    def as_condition(self) -> dict[str, Any]:
        return {"alias": self.name}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AssetAlias) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("alias", self.name))

    def __repr__(self) -> str:
        return f"AssetAlias({self.name!r})"


class _AssetBool(BaseAsset):
    kind = ""

    def __init__(self, *objects: BaseAsset) -> None:
        for obj in objects:
            if not isinstance(obj, BaseAsset):
                raise AssetDefinitionError(
                    f"{type(self).__name__} combines assets, aliases and asset conditions; got "
                    f"{obj!r} ({type(obj).__name__}).")
        if not objects:
            raise AssetDefinitionError(f"{type(self).__name__} needs at least one asset.")
        self.objects = list(objects)

    def as_condition(self) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for obj in self.objects:
            cond = obj.as_condition()
            # (a & b) & c is all of a, b, c
            items.extend(cond[self.kind] if self.kind in cond else [cond])
        return {self.kind: items}

    def iter_assets(self) -> Iterator[Asset]:
        for obj in self.objects:
            if isinstance(obj, Asset):
                yield obj
            elif isinstance(obj, _AssetBool):
                yield from obj.iter_assets()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.objects))})"


class AssetAll(_AssetBool):
    """Every one of the assets (``a & b``; ``schedule=[a, b]``)."""

    kind = "all"


class AssetAny(_AssetBool):
    """At least one of the assets (``a | b``)."""

    kind = "any"


class AssetOrTimeSchedule:
    """Runs on a timetable AND whenever the asset condition is met (Airflow's class)."""

    def __init__(self, *, timetable: Timetable | str, assets: Iterable[BaseAsset] | BaseAsset
                 ) -> None:
        self.timetable = parse_schedule(timetable) if isinstance(timetable, str) else timetable
        if not isinstance(self.timetable, Timetable):
            raise AssetDefinitionError(
                f"AssetOrTimeSchedule: timetable must be a Timetable (for example "
                f"CronTriggerTimetable('0 1 * * 3', timezone='UTC')), got {timetable!r}.")
        self.assets = assets if isinstance(assets, BaseAsset) else _all_of(
            list(assets), "AssetOrTimeSchedule assets")

    @property
    def summary(self) -> str:
        return f"Triggered by assets or {self.timetable.summary}"


def _all_of(items: list[Any], where: str) -> AssetAll:
    bad = [i for i in items if not isinstance(i, BaseAsset)]
    if bad:
        raise DagDefinitionError(
            f"{where}: a list schedule holds assets and asset aliases only; got "
            f"{bad[0]!r} ({type(bad[0]).__name__}). Use a cron string or a timedelta alone, "
            "or AssetOrTimeSchedule(timetable=..., assets=...) to combine time and assets.")
    if not items:
        raise DagDefinitionError(f"{where}: an empty list is not a schedule; use None.")
    return AssetAll(*items)


def is_asset_schedule(schedule: Any) -> bool:
    return isinstance(schedule, (BaseAsset, AssetOrTimeSchedule)) or (
        isinstance(schedule, (list, tuple)) and not isinstance(schedule, str))


def asset_schedule(schedule: Any, where: str) -> BaseAsset | AssetOrTimeSchedule:
    """The DAG's ``schedule=`` when it is made of assets; DagDefinitionError when mixed."""
    if isinstance(schedule, (list, tuple)):
        return _all_of(list(schedule), where)
    assert isinstance(schedule, (BaseAsset, AssetOrTimeSchedule))
    return schedule


def serialize_assets(schedule: BaseAsset | AssetOrTimeSchedule) -> dict[str, Any]:
    """The stored form: ``{"assets": condition, "timetable": ..., "summary": ...}``."""
    defined = [a.to_dict() for a in schedule_assets(schedule)]
    if isinstance(schedule, AssetOrTimeSchedule):
        cond = schedule.assets.as_condition()
        partitions = getattr(schedule, "partition_config", None)  # PartitionedAssetTimetable
        if partitions is not None:
            return {"assets": cond, "timetable": serialize_timetable(schedule.timetable),
                    "partitions": partitions.to_dict(), "defined": defined,
                    "summary": f"partitions of {describe_condition(cond)}"}
        return {"assets": cond, "timetable": serialize_timetable(schedule.timetable),
                "summary": f"{describe_condition(cond)} or {schedule.timetable.summary}",
                "defined": defined}
    cond = schedule.as_condition()
    return {"assets": cond, "summary": describe_condition(cond), "defined": defined}


def schedule_assets(schedule: Any) -> list[Asset]:
    """The Asset objects of a schedule (for their group, extra and watchers)."""
    if isinstance(schedule, AssetOrTimeSchedule):
        schedule = schedule.assets
    if isinstance(schedule, Asset):
        return [schedule]
    if isinstance(schedule, _AssetBool):
        return list(schedule.iter_assets())
    return []


# --- while a try runs -----------------------------------------------------------------------


@dataclass(frozen=True)
class AssetEvent:
    """One recorded update of an asset (what ``triggering_asset_events``/``inlet_events`` hold)."""

    id: int
    asset: Asset
    extra: dict[str, Any]
    timestamp: datetime
    source_dag_id: str | None = None
    source_run_id: str | None = None
    source_task_id: str | None = None
    source_map_index: int = -1
    source_aliases: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> AssetEvent:
        a = data["asset"]
        ts = data["timestamp"]
        return cls(
            id=int(data["id"]), asset=Asset(name=a["name"], uri=a["uri"],
                                            group=a.get("group") or "asset"),
            extra=dict(data.get("extra") or {}),
            timestamp=ts if isinstance(ts, datetime) else datetime.fromisoformat(str(ts)),
            source_dag_id=data.get("source_dag_id"), source_run_id=data.get("source_run_id"),
            source_task_id=data.get("source_task_id"),
            source_map_index=int(data.get("source_map_index", -1)),
            source_aliases=tuple(data.get("source_aliases") or ()))


def _key_name(key: Any) -> str:
    if isinstance(key, (Asset, AssetAlias)):
        return key.name
    if isinstance(key, str):
        return key
    raise KeyError(f"{key!r}: look events up by Asset, AssetAlias or asset name")


class _EventsByKey(Mapping[Any, list[AssetEvent]]):
    def __init__(self, events: Iterable[AssetEvent]) -> None:
        self._by_name: dict[str, list[AssetEvent]] = {}
        self._by_uri: dict[str, list[AssetEvent]] = {}
        for event in sorted(events, key=lambda e: (e.timestamp, e.id)):
            self._by_name.setdefault(event.asset.name, []).append(event)
            self._by_uri.setdefault(event.asset.uri, []).append(event)
            for alias in event.source_aliases:
                self._by_name.setdefault(alias, []).append(event)

    def __getitem__(self, key: Any) -> list[AssetEvent]:
        if isinstance(key, Asset):
            return list(self._by_name.get(key.name, []))
        name = _key_name(key)
        return list(self._by_name.get(name) or self._by_uri.get(name) or [])

    def __iter__(self) -> Iterator[Any]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


class TriggeringAssetEventsAccessor(_EventsByKey):
    """``triggering_asset_events[asset]``: the events that started this asset-triggered run."""


class InletEventsAccessors(_EventsByKey):
    """``inlet_events[asset]``: the recent events of the task's inlets, oldest first."""

    assets: dict[str, Asset]
    """The inlet assets named only by reference, as stored (name → Asset)."""


@dataclass
class OutletEventAccessor:
    """What a try says about one outlet: ``extra`` for the event; ``add`` for an alias."""

    key: Asset | AssetAlias
    extra: dict[str, Any] = field(default_factory=dict)
    added: list[tuple[Asset, dict[str, Any]]] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)

    def add_partitions(self, keys: str | Iterable[str]) -> None:
        """Record this outlet's event once per partition key (duplicates collapse), instead of
        one event with the run's partition key (Airflow's ``add_partitions``)."""
        for key in [keys] if isinstance(keys, str) else list(keys):
            if not isinstance(key, str) or not key.strip() or len(key) > 250:
                raise ValueError(f"outlet_events[{self.key!r}].add_partitions(): a partition "
                                 f"key must be a non-empty string of at most 250 characters, "
                                 f"got {key!r}")
            if key not in self.partitions:
                self.partitions.append(key)

    def add(self, asset: Asset, extra: Mapping[str, Any] | None = None) -> None:
        """Resolve this alias to ``asset`` for this try: an event of ``asset`` is recorded."""
        if not isinstance(self.key, AssetAlias):
            raise TypeError(f"outlet_events[{self.key!r}].add(): only an AssetAlias is resolved "
                            "to assets; set .extra on an Asset")
        if not isinstance(asset, Asset):
            raise TypeError(f"outlet_events[{self.key!r}].add() takes an Asset, got "
                            f"{type(asset).__name__}")
        self.added.append((asset, _check_extra(extra, f"event of {asset!r}")))


class OutletEventAccessors(Mapping[Any, OutletEventAccessor]):
    """``outlet_events``: one accessor per outlet, made on first use."""

    def __init__(self) -> None:
        self._items: dict[Any, OutletEventAccessor] = {}

    def __getitem__(self, key: Any) -> OutletEventAccessor:
        if not isinstance(key, (Asset, AssetAlias)):
            raise KeyError(f"outlet_events[{key!r}]: use an Asset or an AssetAlias")
        ident = ("alias" if isinstance(key, AssetAlias) else "asset", key.name)
        if ident not in self._items:
            self._items[ident] = OutletEventAccessor(key)
        return self._items[ident]

    def __iter__(self) -> Iterator[Any]:
        return iter(a.key for a in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def to_data(self) -> dict[str, Any]:
        """What the worker records with the try's success (plain JSON)."""
        extras: dict[str, Any] = {}
        aliased: list[dict[str, Any]] = []
        partitions: dict[str, list[str]] = {}
        for acc in self._items.values():
            if acc.partitions:
                partitions[acc.key.name] = list(acc.partitions)
            if isinstance(acc.key, Asset):
                extras[acc.key.name] = _check_extra(acc.extra, f"outlet_events[{acc.key!r}]")
            else:
                aliased.extend({"alias": acc.key.name, "asset": a.to_dict(), "extra": extra}
                               for a, extra in acc.added)
        return {"extras": extras, "aliased": aliased,
                **({"partitions": partitions} if partitions else {})}


def task_asset_refs(items: Any, where: str) -> list[dict[str, Any]]:
    """A task's ``outlets``/``inlets`` as stored (assets and aliases; other values refused)."""
    if items is None:
        return []
    if isinstance(items, (Asset, AssetAlias, AssetNameRef)):
        items = [items]
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Asset):
            out.append({"asset": item.to_dict()})
        elif isinstance(item, AssetNameRef):
            out.append({"asset_ref": {"name": item.name}})
        elif isinstance(item, AssetAlias):
            out.append({"alias": item.name, "group": item.group})
        else:
            raise DagDefinitionError(
                f"{where} holds assets and asset aliases only; got {item!r} "
                f"({type(item).__name__}). Wrap a URI in Asset(...).")
    return out


def task_asset_lists(outlets: Any, inlets: Any, where: str) -> tuple[list[Any], list[Any]]:
    """A task's ``outlets`` and ``inlets`` as lists, checked (assets and aliases only)."""
    lists: list[list[Any]] = []
    for name, value in (("outlets", outlets), ("inlets", inlets)):
        items = [] if value is None else [value] if isinstance(value, BaseAsset) else list(value)
        task_asset_refs(items, f"{where}: {name}")
        lists.append(items)
    return lists[0], lists[1]


def serialize_task_assets(task: Any) -> dict[str, Any]:
    """The ``outlets``/``inlets`` keys of a serialized task (left out when empty)."""
    out: dict[str, Any] = {}
    for name in ("outlets", "inlets"):
        refs = task_asset_refs(getattr(task, name, None), f"task {task.task_id!r}: {name}")
        if refs:
            out[name] = refs
    return out


def asset_context(triggering: Iterable[Mapping[str, Any]] = (),
                  inlets: Iterable[Mapping[str, Any]] = (),
                  inlet_assets: Iterable[Mapping[str, Any]] = (),
                  partition: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The context keys of assets for one try, from plain event data (and the run's
    partition: ``partition_key`` / ``partition_date``)."""
    inlet_events = InletEventsAccessors(AssetEvent.from_data(e) for e in inlets)
    inlet_events.assets = {a["name"]: Asset(name=a["name"], uri=a["uri"],
                                            group=a.get("group") or "asset")
                           for a in inlet_assets}
    return {
        "outlet_events": OutletEventAccessors(),
        "inlet_events": inlet_events,
        "triggering_asset_events": TriggeringAssetEventsAccessor(
            AssetEvent.from_data(e) for e in triggering),
        "partition_key": (partition or {}).get("key"),
        "partition_date": (partition or {}).get("date"),
    }


def outlet_report(task: Any, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a successful try reports of its outlets: the outlets, the ``extra`` set on each,
    and the assets its aliases resolved to. None when the task has no outlet."""
    outlets = task_asset_refs(getattr(task, "outlets", None), f"task {task.task_id!r}: outlets")
    accessors = context.get("outlet_events")
    data = accessors.to_data() if isinstance(accessors, OutletEventAccessors) else {}
    if not outlets and not data.get("aliased"):
        return None
    return {"outlets": outlets, **data}
