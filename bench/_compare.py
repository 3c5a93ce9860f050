"""Side-by-side figures of ``bench/compare.sh``: ``_compare.py DIR N`` reads ``DIR/ref.I.json``
and ``DIR/tree.I.json`` (I = 1..N, one JSON line each) and prints, for every numeric figure, the
median on REF, the median on the working tree and the median of the pairs' ratios (tree / REF).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

# Figures about the machine, not the code: printed first, their ratio tells how alike the
# sessions' conditions were.
HOST = ("host_loop_s", "host_loop_cpu_s")


def leaves(value: Any, prefix: str = "") -> dict[str, float]:
    """Every numeric leaf of a JSON value, by its dotted path (lists by index)."""
    if isinstance(value, bool):
        return {}
    if isinstance(value, int | float):
        return {prefix: float(value)}
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    out: dict[str, float] = {}
    for key, item in items:
        out.update(leaves(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if abs(x) < 1e6 else f"{x:.0f}"


def table(ref: list[dict[str, float]], tree: list[dict[str, float]]) -> list[str]:
    keys = [k for k in ref[0] if all(k in r for r in ref + tree)]
    keys.sort(key=lambda k: (k.split(".")[-1] not in HOST, not k.split(".")[-1].startswith("cpu")))
    width = max((len(k) for k in keys), default=10)
    lines = [f"{'figure':<{width}}  {'REF':>10}  {'tree':>10}  {'tree/REF':>9}  pairs' range"]
    for key in keys:
        a = statistics.median(r[key] for r in ref)
        b = statistics.median(t[key] for t in tree)
        ratios = [t[key] / r[key] for r, t in zip(ref, tree, strict=True) if r[key]]
        ratio = statistics.median(ratios) if ratios else None
        spread = f"{_fmt(min(ratios))}-{_fmt(max(ratios))}" if ratios else "-"
        lines.append(f"{key:<{width}}  {_fmt(a):>10}  {_fmt(b):>10}  {_fmt(ratio):>9}  {spread}")
    return lines


def main() -> None:
    folder, n = Path(sys.argv[1]), int(sys.argv[2])
    ref = [leaves(json.loads((folder / f"ref.{i}.json").read_text())) for i in range(1, n + 1)]
    tree = [leaves(json.loads((folder / f"tree.{i}.json").read_text())) for i in range(1, n + 1)]
    print("\n".join(table(ref, tree)))
    print("(medians of each side; tree/REF: the median of the pairs' ratios, and their range: a "
          "change smaller than the range is noise. Compare CPU figures; wall figures hold only "
          "because both sides ran in this one session.)")


if __name__ == "__main__":
    main()
