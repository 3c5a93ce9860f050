"""Airflow's template macros: ``{{ macros.ds_add(ds, 7) }}``, ``{{ macros.datetime.now() }}``.

The names a template reaches as ``macros.NAME``: ``ds_add``, ``ds_format``, ``datetime``,
``timedelta``, ``dateutil``, ``random``, ``uuid``, ``json``, ``time``. Python code imports
them from this module; templates get ``template_macros()``: the same names, as namespaces of
functions and classes only (``macros.uuid.uuid4()`` works, ``macros.uuid.os`` does not).
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta
from random import random
from types import SimpleNamespace

import dateutil
import dateutil.parser
import dateutil.relativedelta
import dateutil.tz

__all__ = [
    "MacroNamespace",
    "datetime",
    "dateutil",
    "ds_add",
    "ds_format",
    "json",
    "random",
    "template_macros",
    "time",
    "timedelta",
    "uuid",
]


def ds_add(ds: str, days: int) -> str:
    """Add or subtract days from a YYYY-MM-DD date: ``ds_add('2015-01-01', 5)`` is
    ``'2015-01-06'``, ``ds_add('2015-01-06', -5)`` is ``'2015-01-01'``."""
    if not days:
        return str(ds)
    day = datetime.strptime(str(ds), "%Y-%m-%d") + timedelta(days=days)
    return day.strftime("%Y-%m-%d")


def ds_format(ds: str, input_format: str, output_format: str) -> str:
    """Re-format a date string: ``ds_format('2015-01-01', '%Y-%m-%d', '%m-%d-%y')`` is
    ``'01-01-15'``."""
    return datetime.strptime(str(ds), input_format).strftime(output_format)


# -- what templates see as ``macros`` --------------------------------------------------------


class MacroNamespace(SimpleNamespace):
    """A read-only bag of functions and classes (never a module): what a template reaches
    under ``macros``. The sandbox refuses ``__dunder__`` attributes, so nothing here leads
    back to a module, ``os`` or ``sys``."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"macros.{name} cannot be changed")


def _namespace(**members: object) -> MacroNamespace:
    ns = MacroNamespace()
    ns.__dict__.update(members)
    return ns


def _dateutil() -> MacroNamespace:
    from dateutil import parser, relativedelta, tz

    weekdays = {d: getattr(relativedelta, d) for d in ("MO", "TU", "WE", "TH", "FR", "SA", "SU")}
    return _namespace(
        parser=_namespace(parse=parser.parse, isoparse=parser.isoparse,
                          ParserError=parser.ParserError),
        relativedelta=_namespace(relativedelta=relativedelta.relativedelta, **weekdays),
        tz=_namespace(gettz=tz.gettz, tzutc=tz.tzutc, tzlocal=tz.tzlocal, tzoffset=tz.tzoffset,
                      UTC=tz.UTC))


def template_macros() -> MacroNamespace:
    """Airflow's ``macros`` as templates use them (``macros.ds_add(ds, 7)``,
    ``macros.datetime.now()``, ``macros.uuid.uuid4()``, ``macros.json.dumps(x)``,
    ``macros.dateutil.relativedelta.relativedelta(months=1)``, ``macros.time.time()``), plus
    the macros of plugins (``macros.<plugin name>.<function>``): functions and classes only."""
    plugins = {k: v for k, v in globals().items()
               if isinstance(v, SimpleNamespace) and not isinstance(v, MacroNamespace)}
    return _namespace(
        datetime=datetime, timedelta=timedelta, dateutil=_DATEUTIL, random=random,
        ds_add=ds_add, ds_format=ds_format,
        json=_namespace(dumps=json.dumps, loads=json.loads,
                        JSONDecodeError=json.JSONDecodeError),
        time=_namespace(**{n: getattr(time, n) for n in (
            "time", "time_ns", "monotonic", "perf_counter", "strftime", "strptime", "gmtime",
            "localtime", "mktime", "asctime", "ctime")}),
        uuid=_namespace(uuid1=uuid.uuid1, uuid3=uuid.uuid3, uuid4=uuid.uuid4,
                        uuid5=uuid.uuid5, UUID=uuid.UUID, NAMESPACE_DNS=uuid.NAMESPACE_DNS,
                        NAMESPACE_URL=uuid.NAMESPACE_URL, NAMESPACE_OID=uuid.NAMESPACE_OID,
                        NAMESPACE_X500=uuid.NAMESPACE_X500),
        **plugins)


_DATEUTIL = _dateutil()
