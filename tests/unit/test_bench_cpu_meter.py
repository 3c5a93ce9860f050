"""bench/_cpu.py: the CPU of every process a benchmark involves, counted, not guessed.

Each case runs in a process of its own (the meter makes its process a child subreaper, which
the test session's process must not become): a driver script meters some work and prints the
meter's figures with the CPU the workers themselves measured (``time.process_time``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"

PRELUDE = f"""
import json, os, subprocess, sys, time
sys.path.insert(0, {str(BENCH)!r})
from _cpu import CpuMeter
BURN = {BURN!r}
"""


def _drive(body: str, *args: str) -> dict[str, Any]:
    script = PRELUDE + textwrap.dedent(body)
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                         timeout=60, check=True)
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def test_short_lived_children_are_all_counted() -> None:
    """Processes that live a fraction of the sampling interval are in ``cpu_s`` (through
    RUSAGE_CHILDREN), and only the part the sampling did not see is ``unsampled``."""
    out = _drive("""
        code = BURN.format(s=0.03) + "print(time.process_time())"
        with CpuMeter(host=False, interval=5.0) as m:
            own = [float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                        text=True, check=True).stdout) for _ in range(6)]
        print(json.dumps({"cpu_s": m.cpu_s, "roles": m.by_role, "own": sum(own)}))
    """)
    assert out["cpu_s"] >= out["own"] - 0.02  # the children's own measure (clock ticks: 10 ms)
    assert out["cpu_s"] < out["own"] + 0.6  # plus six interpreters' start-up, no more
    assert out["roles"]["unsampled"] > out["own"] * 0.5  # no sample saw them: 5 s interval


def test_an_orphaned_grandchild_comes_back_and_counts() -> None:
    """A grandchild whose parent exited at once (as a forkserver does when its scheduler
    process ends) is re-parented to the metered process and its CPU is in ``cpu_s``."""
    out = _drive("""
        grandchild = (BURN.format(s=0.3)
                      + "os.write(int(sys.argv[1]), str(time.process_time()).encode())")
        child = ("import os, subprocess, sys\\n"
                 "subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]],"
                 " pass_fds=[int(sys.argv[2])])")
        r, w = os.pipe()
        with CpuMeter(host=False) as m:
            subprocess.run([sys.executable, "-c", child, "import os, sys, time\\n" + grandchild,
                            str(w)], pass_fds=[w], check=True)
            os.close(w)
            burnt = float(os.read(r, 100))  # the grandchild's own CPU, sent before it exits
        print(json.dumps({"cpu_s": m.cpu_s, "burnt": burnt}))
    """)
    assert out["burnt"] >= 0.29
    assert out["cpu_s"] >= out["burnt"] - 0.02


def test_cpu_before_the_meter_is_not_counted() -> None:
    """A child that burnt CPU before the meter started counts only what it burns after."""
    out = _drive("""
        code = (BURN.format(s=0.3) + "sys.stdout.write('ready\\\\n'); sys.stdout.flush()\\n"
                "sys.stdin.readline()\\n" + BURN.format(s=0.1))
        p = subprocess.Popen([sys.executable, "-c", "import sys\\n" + code],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline() == "ready\\n"
        with CpuMeter(host=False) as m:
            p.stdin.write("go\\n"); p.stdin.flush()
            p.wait()
        print(json.dumps({"cpu_s": m.cpu_s}))
    """)
    assert 0.09 <= out["cpu_s"] < 0.25


@pytest.mark.postgres
def test_the_postgresql_backends_of_the_connections_are_counted(postgres_url: str) -> None:
    """A query's CPU is spent in the server's backend: it is in ``cpu_s`` as ``postgresql``."""
    out = _drive("""
        from sqlalchemy import create_engine, text
        url = sys.argv[1]
        engine = create_engine(url)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            with CpuMeter(url, host=False) as m:
                # This thread's CPU (the meter's sampling thread burns the process's too)
                t = time.thread_time()
                conn.execute(text("SELECT count(*) FROM generate_series(1, 4000000)")).scalar()
                mine = time.thread_time() - t
        engine.dispose()
        print(json.dumps({"cpu_s": m.cpu_s, "roles": m.by_role, "mine": mine}))
    """, postgres_url)
    assert out["mine"] < 0.05  # the client waits; the server computes
    assert out["roles"]["postgresql"] >= 0.1
    assert out["roles"]["postgresql_server"] >= out["roles"]["postgresql"] - 0.02
    assert out["cpu_s"] >= out["roles"]["postgresql"]


def test_compare_pairs_each_run_with_its_neighbour() -> None:
    """bench/compare.sh's table: every numeric leaf by its dotted path, each side's median and
    the median of the pairs' ratios (not the ratio of the medians)."""
    sys.path.insert(0, str(BENCH))
    try:
        import _compare
    finally:
        sys.path.remove(str(BENCH))
    assert _compare.leaves({"a": {"b": [1, 2.5]}, "ok": True, "s": "x"}) == {
        "a.b.0": 1.0, "a.b.1": 2.5}
    ref = [{"cpu_s": 1.0}, {"cpu_s": 4.0}, {"cpu_s": 10.0}]
    tree = [{"cpu_s": 3.0}, {"cpu_s": 4.4}, {"cpu_s": 4.0}]
    header, row = _compare.table(ref, tree)
    assert header.split()[:4] == ["figure", "REF", "tree", "tree/REF"]
    # medians 4 and 4 (their ratio 1); pair ratios 3, 1.1, 0.4: median 1.1, range 0.4-3
    assert row.split() == ["cpu_s", "4", "4", "1.1", "0.4-3"]
