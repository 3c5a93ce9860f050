"""Modes of the files statewright keeps: ``$STATEWRIGHT_HOME`` 0700, and the SQLite database
(with its WAL and SHM), the keys, the standalone admin's password and the logs 0600 — 0750 and
0640 with ``STATEWRIGHT_FILES_GROUP_READABLE``. Processes started by the ``statewright`` command
run under the matching umask, so every new file gets those modes; at start-up, files and
folders of ours that are looser are tightened, each with a warning."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from statewright.config import Settings

log = logging.getLogger(__name__)

KEPT_FILES = ("secret_key", "fernet.key", "standalone_admin_password.txt")


def umask_for(group_readable: bool) -> int:
    return 0o027 if group_readable else 0o077


def modes_for(group_readable: bool) -> tuple[int, int]:
    """(folder mode, file mode)."""
    return (0o750, 0o640) if group_readable else (0o700, 0o600)


def apply_umask(settings: Settings) -> int:
    """Set the process's umask (new files 0600, folders 0700); returns the previous one."""
    return os.umask(umask_for(settings.files_group_readable))


def sqlite_path(database_url: str) -> Path | None:
    if not database_url.startswith("sqlite") or "///" not in database_url:
        return None
    path = database_url.split("///", 1)[1].split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


def kept_paths(settings: Settings) -> tuple[list[Path], list[Path]]:
    """(folders, files) that statewright owns and keeps private."""
    folders = [settings.home, settings.logs_folder]
    files = [settings.home / name for name in KEPT_FILES]
    db = sqlite_path(settings.database_url)
    if db is not None:
        files += [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return folders, files


def _tighten(path: Path, wanted: int) -> str | None:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid():
        return None  # not ours to change
    mode = stat.S_IMODE(st.st_mode)
    if not mode & ~wanted:
        return None
    try:
        os.chmod(path, mode & wanted)
    except OSError as exc:
        return f"{path} is mode {mode:04o}, looser than {wanted:04o}, and could not be changed " \
               f"({exc.strerror}); change it with chmod {wanted:04o}"
    return f"{path} was mode {mode:04o}, looser than {wanted:04o}: changed to {mode & wanted:04o}"


def secure_files(settings: Settings) -> list[str]:
    """Create the home folder with its mode, tighten what is looser than it should be, and
    log a warning for each; returns the warnings."""
    folder_mode, file_mode = modes_for(settings.files_group_readable)
    if not settings.home.exists():
        settings.home.mkdir(parents=True, mode=folder_mode, exist_ok=True)
    folders, files = kept_paths(settings)
    found = [_tighten(p, folder_mode) for p in folders] + [_tighten(p, file_mode) for p in files]
    warnings = [w for w in found if w is not None]
    for warning in warnings:
        log.warning("file permissions: %s", warning)
    return warnings
