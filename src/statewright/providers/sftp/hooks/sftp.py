"""``SFTPHook``: files on a remote host over SFTP (Airflow's sftp provider).

It reads the same connection as ``SSHHook`` (type ``sftp`` or ``ssh``; ``sftp_default`` by
default); ``get_conn()`` is a paramiko ``SFTPClient`` kept open by the hook until
``close_conn()`` (or the end of a ``with`` block).
"""

from __future__ import annotations

import datetime
import fnmatch
import os
import stat
from collections.abc import Callable
from typing import Any, ClassVar

from statewright.providers.ssh.hooks.ssh import SSHHook

__all__ = ["SFTPHook"]


class SFTPHook(SSHHook):
    conn_name_attr: ClassVar[str] = "ssh_conn_id"
    default_conn_name: ClassVar[str] = "sftp_default"
    conn_type: ClassVar[str] = "sftp"
    hook_name: ClassVar[str] = "SFTP"

    def __init__(self, ssh_conn_id: str | None = "sftp_default", ssh_hook: SSHHook | None = None,
                 **kwargs: Any) -> None:
        kwargs.pop("use_managed_conn", None)  # one connection per hook, closed by close_conn()
        if ssh_hook is not None:
            ssh_conn_id = ssh_hook.ssh_conn_id
            kwargs.setdefault("remote_host", ssh_hook.remote_host)
        super().__init__(ssh_conn_id=ssh_conn_id, **kwargs)
        self.conn: Any = None

    def get_conn(self) -> Any:  # type: ignore[override]
        """The hook's ``paramiko.SFTPClient`` (opened on first use)."""
        if self.conn is None:
            ssh = super().get_conn()
            self.conn = ssh.open_sftp()
        return self.conn

    def close_conn(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> SFTPHook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_conn()

    def test_connection(self) -> tuple[bool, str]:
        try:
            self.get_conn().normalize(".")
            return True, "Connection successfully tested"
        except Exception as exc:
            return False, str(exc)

    # -- directories ----------------------------------------------------------------------------

    def describe_directory(self, path: str) -> dict[str, dict[str, Any]]:
        """Each entry of ``path``: its ``size``, ``type`` (``file``/``dir``/``other``) and
        ``modify`` time (``YYYYmmddHHMMSS``, UTC)."""
        return {a.filename: {"size": a.st_size, "type": _kind(a.st_mode),
                             "modify": _mtime(a.st_mtime)}
                for a in self.get_conn().listdir_attr(path)}

    def list_directory(self, path: str) -> list[str]:
        """The names in ``path``, sorted."""
        return sorted(self.get_conn().listdir(path))

    def list_directory_with_attr(self, path: str) -> list[Any]:
        return sorted(self.get_conn().listdir_attr(path), key=lambda a: a.filename)

    def mkdir(self, path: str, mode: int = 0o777) -> None:
        self.get_conn().mkdir(path, mode)

    def isdir(self, path: str) -> bool:
        try:
            return stat.S_ISDIR(self.get_conn().stat(path).st_mode or 0)
        except OSError:
            return False

    def isfile(self, path: str) -> bool:
        try:
            return stat.S_ISREG(self.get_conn().stat(path).st_mode or 0)
        except OSError:
            return False

    def create_directory(self, path: str, mode: int = 0o777) -> None:
        """Create ``path`` and any missing parent; nothing when it is a directory already."""
        if self.isdir(path):
            return
        if self.isfile(path):
            raise FileExistsError(f"{path} already exists on the SFTP server as a file")
        parent = os.path.dirname(path.rstrip("/"))
        if parent and parent != path:
            self.create_directory(parent, mode)
        self.get_conn().mkdir(path, mode)

    def delete_directory(self, path: str, include_files: bool = False) -> None:
        if include_files:
            for name in self.list_directory(path):
                child = f"{path.rstrip('/')}/{name}"
                if self.isdir(child):
                    self.delete_directory(child, include_files=True)
                else:
                    self.delete_file(child)
        self.get_conn().rmdir(path)

    # -- files ------------------------------------------------------------------------------------

    def retrieve_file(self, remote_full_path: str, local_full_path: Any,
                      prefetch: bool = True) -> None:
        """Copy the remote file to ``local_full_path`` (a path or a writable binary file)."""
        self.log.info("Retrieving file from SFTP: %s", remote_full_path)
        if isinstance(local_full_path, (str, os.PathLike)):
            self.get_conn().get(remote_full_path, os.fspath(local_full_path), prefetch=prefetch)
        else:
            self.get_conn().getfo(remote_full_path, local_full_path, prefetch=prefetch)

    def store_file(self, remote_full_path: str, local_full_path: Any,
                   confirm: bool = True) -> None:
        """Copy ``local_full_path`` (a path or a readable binary file) to the remote path."""
        self.log.info("Storing file on SFTP: %s", remote_full_path)
        if isinstance(local_full_path, (str, os.PathLike)):
            self.get_conn().put(os.fspath(local_full_path), remote_full_path, confirm=confirm)
        else:
            self.get_conn().putfo(local_full_path, remote_full_path, confirm=confirm)

    def delete_file(self, path: str) -> None:
        self.get_conn().remove(path)

    def get_mod_time(self, path: str) -> str:
        """The modification time of ``path``, as ``YYYYmmddHHMMSS`` (UTC)."""
        return _mtime(self.get_conn().stat(path).st_mtime)

    def path_exists(self, path: str) -> bool:
        try:
            self.get_conn().stat(path)
        except OSError:
            return False
        return True

    def get_files_by_pattern(self, path: str, fnmatch_pattern: str) -> list[str]:
        """The names of the files in ``path`` that match the shell pattern."""
        return [a.filename for a in self.list_directory_with_attr(path)
                if fnmatch.fnmatch(a.filename, fnmatch_pattern)
                and not stat.S_ISDIR(a.st_mode or 0)]

    def walktree(self, path: str, fcallback: Callable[[str], Any],
                 dcallback: Callable[[str], Any], ucallback: Callable[[str], Any],
                 recurse: bool = True) -> None:
        """Call ``fcallback`` for each file, ``dcallback`` for each directory and ``ucallback``
        for anything else under ``path``."""
        for entry in self.list_directory_with_attr(path):
            child = f"{path.rstrip('/')}/{entry.filename}"
            mode = entry.st_mode or 0
            if stat.S_ISDIR(mode):
                dcallback(child)
                if recurse:
                    self.walktree(child, fcallback, dcallback, ucallback)
            elif stat.S_ISREG(mode):
                fcallback(child)
            else:
                ucallback(child)

    def get_tree_map(self, path: str, prefix: str | None = None,
                     delimiter: str | None = None) -> tuple[list[str], list[str], list[str]]:
        """Files, directories and other entries under ``path`` (recursively)."""
        files: list[str] = []
        dirs: list[str] = []
        unknown: list[str] = []

        def keep(into: list[str]) -> Callable[[str], None]:
            def add(item: str) -> None:
                if (prefix is None or item.startswith(prefix)) and (
                        delimiter is None or item.endswith(delimiter)):
                    into.append(item)
            return add

        self.walktree(path, keep(files), keep(dirs), keep(unknown))
        return files, dirs, unknown


def _kind(mode: int | None) -> str:
    if stat.S_ISDIR(mode or 0):
        return "dir"
    return "file" if stat.S_ISREG(mode or 0) else "other"


def _mtime(seconds: float | None) -> str:
    moment = datetime.datetime.fromtimestamp(seconds or 0, tz=datetime.UTC)
    return moment.strftime("%Y%m%d%H%M%S")
