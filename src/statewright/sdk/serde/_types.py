"""Tags for the library types: Decimal, UUID, bytes, timezones, NumPy and pandas values.

NumPy and pandas are optional: they are looked at only when the program has imported them
(a value of theirs cannot exist otherwise), and imported to read a value back.

A DataFrame is stored column by column, each column as its list of values written by the same
serializer (missing values as ``null``) with its dtype, and the index as its values (``null``
for the default 0..n-1). The form is JSON, exact (floats keep every digit, decimals and
datetimes keep their type) and readable; a large frame belongs in the object-storage XCom
backend, not in a database row.
"""

from __future__ import annotations

import base64
import sys
import uuid
from datetime import timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from statewright.sdk.serde._core import CLASSNAME, TYPE_KEY, Walk, deserialize_value, members

_TYPES: dict[type, Any] = {}


def encode(value: Any, walk: Walk) -> dict[str, Any] | None:
    """The tagged form of ``value`` when it is one of these types, else ``None``."""
    writer = _TYPES.get(type(value))
    if writer is not None:
        return writer(value, walk)  # type: ignore[no-any-return]
    if isinstance(value, tzinfo):
        return _write_timezone(value)
    if "numpy" in sys.modules:
        tagged = _write_numpy(value, walk)
        if tagged is not None:
            return tagged
    if "pandas" in sys.modules:
        return _write_pandas(value, walk)
    return None


def _write_decimal(value: Decimal, walk: Walk) -> dict[str, Any]:
    return {TYPE_KEY: "decimal", "value": str(value)}


def _write_uuid(value: uuid.UUID, walk: Walk) -> dict[str, Any]:
    return {TYPE_KEY: "uuid", "value": str(value)}


def _write_bytes(value: bytes, walk: Walk) -> dict[str, Any]:
    return {TYPE_KEY: "bytes", "value": base64.b64encode(bytes(value)).decode("ascii")}


_TYPES.update({Decimal: _write_decimal, uuid.UUID: _write_uuid, bytes: _write_bytes,
               bytearray: _write_bytes})


def _write_timezone(value: tzinfo) -> dict[str, Any] | None:
    if isinstance(value, ZoneInfo) and value.key:
        return {TYPE_KEY: "timezone", "value": value.key}
    offset = value.utcoffset(None)
    if isinstance(value, timezone) and offset is not None:
        return {TYPE_KEY: "timezone", "value": offset.total_seconds()}
    return None


def _read_timezone(data: dict[str, Any], raw: Any) -> tzinfo:
    if isinstance(raw, str):
        return ZoneInfo(raw)
    return timezone(timedelta(seconds=raw))


# -- NumPy ----------------------------------------------------------------------------------------

def _write_numpy(value: Any, walk: Walk) -> dict[str, Any] | None:
    import numpy as np

    if isinstance(value, np.ndarray):
        return {TYPE_KEY: "ndarray", CLASSNAME: "numpy.ndarray", "dtype": value.dtype.str,
                "shape": list(value.shape), "value": walk.inner(value.ravel().tolist())}
    if isinstance(value, np.generic):
        item = value.item()
        if isinstance(item, complex):
            return None
        return {TYPE_KEY: "numpy", CLASSNAME: f"numpy.{value.dtype.name}",
                "dtype": value.dtype.str, "value": walk.inner(item)}
    return None


def _read_numpy(data: dict[str, Any], raw: Any) -> Any:
    import numpy as np

    return np.dtype(data["dtype"]).type(deserialize_value(raw))


def _read_ndarray(data: dict[str, Any], raw: Any) -> Any:
    import numpy as np

    flat = members(raw)
    dtype = np.dtype(data["dtype"])
    if dtype.kind == "O":
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
    else:
        out = np.array(flat, dtype=dtype)
    return out.reshape(data["shape"])


# -- pandas ---------------------------------------------------------------------------------------

def _write_pandas(value: Any, walk: Walk) -> dict[str, Any] | None:
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        data = [_column_values(value.iloc[:, i], walk) for i in range(value.shape[1])]
        dtypes = [str(t) for t in value.dtypes]
        return {TYPE_KEY: "dataframe", CLASSNAME: "pandas.core.frame.DataFrame",
                "value": {"columns": _write_index(value.columns, walk), "dtypes": dtypes,
                          "data": data, "index": _write_index(value.index, walk)}}
    if isinstance(value, pd.Series):
        return {TYPE_KEY: "series", CLASSNAME: "pandas.core.series.Series",
                "value": {"name": walk.inner(value.name), "dtype": str(value.dtype),
                          "data": _column_values(value, walk),
                          "index": _write_index(value.index, walk)}}
    return None


def _column_values(column: Any, walk: Walk) -> list[Any]:
    plain = column.astype(object).where(column.notna(), None)
    return [walk.inner(v) for v in plain.tolist()]


def _write_index(index: Any, walk: Walk) -> Any:
    import pandas as pd

    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 \
            and index.name is None:
        return None
    out: dict[str, Any] = {"values": [walk.inner(v) for v in index.tolist()],
                           "names": [walk.inner(n) for n in index.names]}
    if isinstance(index, pd.MultiIndex):
        out["multi"] = True
    else:
        out["dtype"] = str(index.dtype)
    return out


def _read_index(spec: Any, length: int) -> Any:
    import pandas as pd

    if spec is None:
        return pd.RangeIndex(length)
    values = members(spec["values"])
    names = members(spec["names"])
    if spec.get("multi"):
        return pd.MultiIndex.from_tuples(values, names=names)
    return pd.Index(values, dtype=_dtype(spec.get("dtype")), name=names[0])


def _dtype(name: str | None) -> Any:
    return None if name in (None, "object") else name


def _column(values: list[Any], dtype: str) -> Any:
    import pandas as pd

    column = pd.Series(values, dtype=object)
    return column if dtype == "object" else column.astype(dtype)


def _read_dataframe(data: dict[str, Any], raw: Any) -> Any:
    import pandas as pd

    series = [_column(members(values), dtype) for values, dtype in zip(raw["data"],
                                                                        raw["dtypes"],
                                                                        strict=True)]
    length = len(series[0]) if series else len(raw["index"]["values"]) if raw["index"] else 0
    frame = pd.concat(series, axis=1) if series else pd.DataFrame(index=range(length))
    frame.columns = _read_index(raw["columns"], len(series))
    frame.index = _read_index(raw["index"], length)
    return frame


def _read_series(data: dict[str, Any], raw: Any) -> Any:
    values = members(raw["data"])
    column = _column(values, raw["dtype"])
    column.index = _read_index(raw["index"], len(values))
    column.name = deserialize_value(raw["name"])
    return column


READERS: dict[str, Any] = {
    "decimal": lambda data, raw: Decimal(raw),
    "uuid": lambda data, raw: uuid.UUID(raw),
    "bytes": lambda data, raw: base64.b64decode(raw.encode("ascii"), validate=True),
    "timezone": _read_timezone,
    "numpy": _read_numpy,
    "ndarray": _read_ndarray,
    "dataframe": _read_dataframe,
    "series": _read_series,
}
