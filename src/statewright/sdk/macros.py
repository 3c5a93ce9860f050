"""Airflow's template macros: ``{{ macros.ds_add(ds, 7) }}``, ``{{ macros.datetime.now() }}``.

The names a template reaches as ``macros.NAME``: ``ds_add``, ``ds_format``, ``datetime``,
``timedelta``, ``dateutil``, ``random``, ``uuid``, ``json``, ``time``.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta
from random import random

import dateutil
import dateutil.parser
import dateutil.relativedelta
import dateutil.tz

__all__ = [
    "datetime",
    "dateutil",
    "ds_add",
    "ds_format",
    "json",
    "random",
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
