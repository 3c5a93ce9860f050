"""Users' DAG files from public repositories, through statewright, against real Airflow (not a
test). Prints one JSON line: the load rate and the match rate; with ``--details``, one JSON line
per file before it.

Each file of ``tests/fixtures/real_world_dags`` runs in its own process, in a copy of its
repository folder, under ``STATEWRIGHT_AIRFLOW_COMPAT=true``: it is checked as ``statewright
dags check --airflow`` checks it (loads or not, the Airflow names statewright lacks), then each
DAG runs once with ``dag.test()`` at the oracle's logical date, with the same connections
(``STATEWRIGHT_CONN_<ID>`` and ``AIRFLOW_CONN_<ID>``, to this machine's PostgreSQL and MariaDB,
emptied before each file) as the oracle had. The DAGs folder and the plugins folder are put on
``sys.path`` as Airflow puts them.

The oracle, ``expected.json``, holds what Airflow 2.10 and Airflow 3.3 did with each file
(``_record_expected.py``). A file is compared with the Airflow of its imports (SOURCES.json's
``airflow``), or with the other one if only that one parses it.

Figures:
- ``loading``: files statewright loads / all files;
- ``loading_supported``: the same among files whose ``airflow.providers`` imports are all of
  providers statewright supports (``SUPPORTED_PROVIDERS``);
- ``loading_where_airflow_parses``: files statewright loads among those the oracle parses;
- ``dag_ids_match``: files whose DAG ids and task ids are the oracle's, among those both load;
- ``comparable_dags``: DAGs the oracle ran to an end (a run state, no timeout), of files both
  load, except files whose tasks draw at random (``random.choice``...); ``matching_dags``:
  those of them whose run state and every task instance's final state are the oracle's.

Usage: python bench/real_world_dags.py [--details] [--jobs 2] [--save F | --reuse F] [FILE ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parents[1] / "tests" / "fixtures" / "real_world_dags"
sys.path.insert(0, str(CORPUS))
import _corpus  # noqa: E402

SUPPORTED_PROVIDERS = frozenset({"postgres", "mysql", "sqlite", "common", "http", "ssh", "sftp",
                                 "smtp", "amazon", "docker", "standard"})
"""``airflow.providers.<name>`` statewright answers (``common`` is common.sql/compat/io)."""


def one(path: str) -> None:
    """In the child process: check the file, then run each DAG, printing one line each."""
    import logging

    from statewright.compat.airflow.check import check_file
    from statewright.sdk.loader import load_dag_file

    logging.disable(logging.WARNING)
    here = Path(__file__).resolve().parent  # bench/'s modules must not answer a DAG's imports
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    report = check_file(Path(path), airflow=True)
    loaded = load_dag_file(path) if report.loads else None
    dags = {d: sorted(t.task_id for t in dag.tasks)
            for d, dag in sorted((loaded.dags if loaded else {}).items())}
    print("PARSE " + json.dumps({"loads": report.loads, "error": report.error, "dags": dags,
                                 "missing": report.missing, "features": report.features}),
          flush=True)
    for dag_id, dag in sorted((loaded.dags if loaded else {}).items()):
        try:
            run = dag.test(logical_date=_corpus.LOGICAL_DATE)
            out: dict[str, Any] = {"state": _state(run.state),
                                   "task_instances": {k: _state(v) for k, v in
                                                      sorted(run.states.items())}}
        except BaseException as exc:
            out = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        print("RUN " + json.dumps({"dag_id": dag_id, **out}), flush=True)


def _state(value: Any) -> str:
    value = getattr(value, "value", value)
    return "None" if value is None else str(value)


def _run(rel: str, worker: int) -> dict[str, Any]:
    _corpus.reset_databases(worker)
    staged = _corpus.stage(rel)
    conns = _corpus.connection_env(worker)
    env = dict(os.environ, **conns, STATEWRIGHT_AIRFLOW_COMPAT="true",
               STATEWRIGHT_DAGS_FOLDER=str(staged.dags_folder))
    env.update({k.replace("AIRFLOW_CONN_", "STATEWRIGHT_CONN_"): v for k, v in conns.items()})
    env["STATEWRIGHT_PLUGINS_FOLDER"] = str(staged.plugins_folder)
    paths = [str(staged.dags_folder), str(staged.plugins_folder)]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.Popen([sys.executable, __file__, "--one", str(staged.file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=staged.tmp, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=_corpus.TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    staged.cleanup()
    return _parse_output(out, err, timed_out)


def _parse_output(out: str, err: str, timed_out: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"runs": {}}
    for line in out.splitlines():
        if line.startswith("PARSE "):
            result.update(json.loads(line[len("PARSE "):]))
        elif line.startswith("RUN "):
            run = json.loads(line[len("RUN "):])
            result["runs"][run.pop("dag_id")] = run
    if timed_out:
        result["timeout"] = True
    if "loads" not in result:
        result["loads"] = False
        result["error"] = "crash: " + ((err.strip().splitlines() or ["?"])[-1])[-300:]
    return result


def providers(rel: str) -> set[str]:
    """The ``airflow.providers.<name>`` a file imports."""
    try:
        tree = ast.parse((CORPUS / rel).read_bytes())
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        for mod in mods:
            parts = mod.split(".")
            if parts[:2] == ["airflow", "providers"] and len(parts) > 2:
                names.add(parts[2])
    return names


def oracle_for(source: dict[str, Any], expected: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The oracle section a file is compared with, and its record there."""
    first = f"airflow{source['airflow']}"
    other = "airflow3" if first == "airflow2" else "airflow2"
    rec = expected.get(first, {}).get("files", {}).get(source["file"], {})
    alt = expected.get(other, {}).get("files", {}).get(source["file"], {})
    if not rec.get("parses") and alt.get("parses"):
        return other, alt
    return first, rec


def compare(source: dict[str, Any], seen: dict[str, Any],
            expected: dict[str, Any]) -> dict[str, Any]:
    key, rec = oracle_for(source, expected)
    detail: dict[str, Any] = {
        "file": source["file"], "oracle": key, "airflow_parses": bool(rec.get("parses")),
        "loads": seen["loads"], "providers": sorted(providers(source["file"])),
        "error": _last_line(seen.get("error")), "missing": seen.get("missing", []),
        "airflow_error": _last_line(next(iter(rec.get("import_errors", {}).values()), None)
                                    or rec.get("crash")),
        "dags": {}}
    if seen["loads"] and rec.get("parses"):
        detail["dag_ids_match"] = seen.get("dags") == rec.get("dags")
        chance = _draws_at_random(source["file"])
        for dag_id, want in rec.get("runs", {}).items():
            got = seen["runs"].get(dag_id)
            comparable = "state" in want and not chance
            entry: dict[str, Any] = {"comparable": comparable,
                                     "match": comparable and got is not None
                                     and got.get("state") == want["state"]
                                     and got.get("task_instances") == want["task_instances"]}
            if not entry["match"]:
                entry["airflow"], entry["statewright"] = want, got
            detail["dags"][dag_id] = entry
    if seen.get("timeout"):
        detail["timeout"] = True
    if rec.get("timeout"):
        detail["airflow_timeout"] = True
    return detail


def _draws_at_random(rel: str) -> bool:
    """Whether the file's tasks draw at random (a branch by random.choice): their runs need
    not end as Airflow's did, so they are not compared."""
    text = (CORPUS / rel).read_text(encoding="utf-8", errors="replace")
    return re.search(r"\b(random\.)?(choice|randint|random|shuffle|sample)\(", text) is not None \
        and re.search(r"^\s*(import random|from random import)", text, re.M) is not None


def _last_line(text: str | None) -> str | None:
    if not text:
        return None
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1][-300:] if lines else None


def summary(details: list[dict[str, Any]]) -> dict[str, Any]:
    def ratio(items: list[dict[str, Any]], key: str) -> str:
        return f"{sum(1 for d in items if d.get(key))}/{len(items)}"

    supported = [d for d in details if set(d["providers"]) <= SUPPORTED_PROVIDERS]
    parsed = [d for d in details if d["airflow_parses"]]
    both = [d for d in details if d["loads"] and d["airflow_parses"]]
    dags = [e for d in both for e in d["dags"].values() if e["comparable"]]
    return {"files": len(details), "loading": ratio(details, "loads"),
            "loading_supported": ratio(supported, "loads"),
            "loading_where_airflow_parses": ratio(parsed, "loads"),
            "dag_ids_match": ratio(both, "dag_ids_match"),
            "comparable_dags": len(dags),
            "matching_dags": sum(1 for e in dags if e["match"])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--save", type=Path, help="also write statewright's outcomes here")
    parser.add_argument("--reuse", type=Path, help="compare outcomes saved by --save, no runs")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    expected = json.loads(_corpus.EXPECTED.read_text()) if _corpus.EXPECTED.exists() else {}
    sources = [s for s in _corpus.dag_files() if not args.files or s["file"] in args.files]
    workers: queue.Queue[int] = queue.Queue()
    for w in range(args.jobs):
        workers.put(50 + w)  # databases of their own (the recorder's are 20+ and 30+)

    saved = json.loads(args.reuse.read_text()) if args.reuse else {}

    def task(source: dict[str, Any]) -> dict[str, Any]:
        if source["file"] in saved:
            return dict(saved[source["file"]])
        w = workers.get()
        try:
            return _run(str(source["file"]), w)
        finally:
            workers.put(w)

    with ThreadPoolExecutor(args.jobs) as pool:
        seen = dict(zip([s["file"] for s in sources], pool.map(task, sources), strict=True))
    if args.save:
        args.save.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
    details = [compare(s, seen[s["file"]], expected) for s in sources]
    if args.details:
        for d in details:
            print(json.dumps(d, sort_keys=True))
    print(json.dumps(summary(details)))


if __name__ == "__main__":
    main()
