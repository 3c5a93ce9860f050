"""Virtual environments for PythonVirtualenvOperator.

A virtual environment is made with ``python -m venv`` and its requirements are installed with
pip. Made from this interpreter, it is made without pip of its own when this interpreter's pip
can install into it (``pip --python``), which saves seconds a try. Under a cache folder it is kept
as ``venv-<hash>``, the hash of what it holds (Airflow's ``venv_cache_path``); a lock file keeps
two workers from building the same one at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from statewright.sdk.operators._python_script import StreamedProcess

log = logging.getLogger("statewright.task")

MARKER = "install_complete_marker.json"
_PIP_WITH_PYTHON_OPTION = (22, 3)  # the first pip with ``--python``


class VirtualenvError(RuntimeError):
    """A virtual environment could not be made or its requirements installed."""


@dataclass(frozen=True)
class VenvSpec:
    """What a virtual environment holds: the interpreter it is made from and its packages."""

    python: str
    requirements: tuple[str, ...]
    system_site_packages: bool
    pip_install_options: tuple[str, ...] = ()
    index_urls: tuple[str, ...] | None = None

    def cache_text(self) -> str:
        return json.dumps({
            "python": self.python,
            "requirements": sorted(self.requirements),
            "system_site_packages": self.system_site_packages,
            "pip_install_options": list(self.pip_install_options),
            "index_urls": None if self.index_urls is None else list(self.index_urls),
        }, sort_keys=True)

    def cache_hash(self) -> str:
        return hashlib.sha256(self.cache_text().encode()).hexdigest()[:12]


def base_python(python_version: str | None) -> str:
    """The interpreter a virtual environment is made from: ``python<version>`` on the PATH, or
    this one."""
    if python_version is None:
        return sys.executable
    found = shutil.which(f"python{python_version}")
    if found is None:
        raise VirtualenvError(
            f"python_version={python_version!r}: no python{python_version} on the PATH to make "
            "the virtual environment with")
    return found


def create(spec: VenvSpec, path: Path) -> Path:
    """Make a virtual environment in ``path`` (an empty or missing folder); its python."""
    own_pip = not _can_install_from_here(spec.python)
    command = [spec.python, "-m", "venv", str(path)]
    if spec.system_site_packages:
        command.append("--system-site-packages")
    if not own_pip:
        command.append("--without-pip")
    log.info("Creating a virtual environment in %s", path)
    _run(command, "creating the virtual environment")
    python = path / "bin" / "python"
    if spec.requirements:
        requirements_file = path / "requirements.txt"
        requirements_file.write_text("\n".join(spec.requirements) + "\n", encoding="utf-8")
        pip = [str(python), "-m", "pip"] if own_pip else [
            sys.executable, "-m", "pip", "--python", str(python)]
        _run([*pip, "install", "--disable-pip-version-check", *spec.pip_install_options,
              *_index_options(spec.index_urls), "-r", str(requirements_file)],
             "installing the requirements")
    return python


def cached(spec: VenvSpec, cache_folder: Path) -> Path:
    """The python of the cached virtual environment for ``spec``, made first if need be."""
    path = cache_folder / f"venv-{spec.cache_hash()}"
    log.info("Python virtual environment will be cached in %s", path)
    cache_folder.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        marker = path / MARKER
        if marker.is_file() and marker.read_text(encoding="utf-8") == spec.cache_text():
            log.info("Reusing cached Python virtual environment in %s", path)
            return path / "bin" / "python"
        if path.exists():
            log.warning("Found an incomplete or different virtual environment in %s, deleting "
                        "and re-creating it.", path)
            shutil.rmtree(path)
        try:
            python = create(spec, path)
            marker.write_text(spec.cache_text(), encoding="utf-8")
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        log.info("New Python virtual environment created in %s", path)
        return python


def _index_options(index_urls: Sequence[str] | None) -> list[str]:
    """Airflow's meaning: the first URL is the index, the others are extra indexes."""
    if not index_urls:
        return []
    options = ["--index-url", index_urls[0]]
    for url in index_urls[1:]:
        options += ["--extra-index-url", url]
    return options


def _can_install_from_here(python: str) -> bool:
    """Whether this interpreter's pip can install into a virtual environment made from
    ``python`` (the same interpreter, and a pip with ``--python``)."""
    if python != sys.executable or importlib.util.find_spec("pip") is None:
        return False
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    parts = tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:2])
    return parts >= _PIP_WITH_PYTHON_OPTION


def _run(command: list[str], what: str) -> None:
    process = StreamedProcess(command)
    code = process.run()
    if code != 0:
        tail = "\n".join(process.stderr_tail)
        raise VirtualenvError(
            f"{what} failed (exit code {code}): {' '.join(command)}"
            + (f"\nLast lines of its stderr:\n{tail}" if tail else ""))
