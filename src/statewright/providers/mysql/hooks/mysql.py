"""``MySqlHook``: ``DbApiHook`` on a ``mysql`` (or ``mariadb``) connection through PyMySQL.

As Airflow's: ``mysql_conn_id`` (default ``mysql_default``), ``schema``, ``local_infile`` and
``init_command``; ``bulk_load`` (``LOAD DATA LOCAL INFILE``: the file is read by this process),
``bulk_dump`` (``SELECT ... INTO OUTFILE``: the file is written by the server, on its machine),
``bulk_load_custom``, ``get_autocommit`` / ``set_autocommit``. The extra's keys PyMySQL
understands are passed on (``charset``, ``ssl``, ``unix_socket``, ``local_infile``,
``init_command``, ``connect_timeout``), and ``cursor`` (``sscursor``, ``dictcursor``,
``ssdictcursor``: rows as dicts, or read from the server as they are fetched); Airflow's
``client`` is ignored (the client is always PyMySQL).
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import pymysql.cursors

from statewright.providers.common.sql.hooks.sql import DbApiHook

__all__ = ["MySqlHook"]

_PYMYSQL_EXTRAS = frozenset({
    "charset", "ssl", "unix_socket", "local_infile", "init_command", "connect_timeout",
    "read_timeout", "write_timeout", "ssl_ca", "ssl_cert", "ssl_key", "ssl_check_hostname",
})


_CURSORS = {"sscursor": pymysql.cursors.SSCursor, "dictcursor": pymysql.cursors.DictCursor,
            "ssdictcursor": pymysql.cursors.SSDictCursor}


class MySqlHook(DbApiHook):
    conn_name_attr = "mysql_conn_id"
    default_conn_name = "mysql_default"
    conn_type = "mysql"
    conn_types = ("mysql", "mariadb")
    hook_name = "MySQL"
    url_kind = "mysql"

    def __init__(self, *args: Any, local_infile: bool = False, init_command: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.local_infile = local_infile
        self.init_command = init_command

    def _driver_extras(self) -> tuple[dict[str, str], dict[str, Any]]:
        query, args = super()._driver_extras()
        query = {k: v for k, v in query.items() if k in _PYMYSQL_EXTRAS}
        args = {k: v for k, v in args.items() if k in _PYMYSQL_EXTRAS}
        if self.local_infile:
            args["local_infile"] = True
        elif "local_infile" in args:
            args["local_infile"] = bool(args["local_infile"])
        if self.init_command:
            query["init_command"] = self.init_command
        return query, args

    def get_conn(self) -> Any:
        conn = super().get_conn()
        cursor = str(self.connection.extra_dejson.get("cursor", "")).lower()
        if cursor in _CURSORS:  # on this connection only, not the engine's
            conn.cursorclass = _CURSORS[cursor]
        return conn

    def bulk_load(self, table: str, tmp_file: str) -> None:
        """Load the tab-separated file ``tmp_file`` (on this machine) into ``table``."""
        self.bulk_load_custom(table, tmp_file)

    def bulk_load_custom(self, table: str, tmp_file: str, duplicate_key_handling: str = "IGNORE",
                         extra_options: str = "") -> None:
        """``LOAD DATA LOCAL INFILE`` with ``duplicate_key_handling`` (``IGNORE`` or
        ``REPLACE``) and ``extra_options`` (``FIELDS TERMINATED BY ','`` ...)."""
        if duplicate_key_handling.upper() not in ("IGNORE", "REPLACE"):
            raise ValueError("duplicate_key_handling must be IGNORE or REPLACE, got "
                             f"{duplicate_key_handling!r}")
        sql = (f"LOAD DATA LOCAL INFILE %s {duplicate_key_handling.upper()} INTO TABLE "
               f"`{table}` {extra_options}").strip()
        self._run_with_infile(sql, tmp_file)

    def bulk_dump(self, table: str, tmp_file: str) -> None:
        """Have the server write ``table`` to ``tmp_file`` (a path on the server's machine that
        does not exist yet, in a folder the server may write to)."""
        self.run(f"SELECT * INTO OUTFILE %s FROM `{table}`", parameters=(tmp_file,))

    def _run_with_infile(self, sql: str, tmp_file: str) -> None:
        engine = self.get_sqlalchemy_engine({"connect_args": {"local_infile": True}})
        try:
            with closing(engine.raw_connection()) as conn:
                with closing(conn.cursor()) as cursor:
                    self._execute(cursor, sql, (tmp_file,))
                conn.commit()
        finally:
            engine.dispose()
