"""The provider tests' servers (started by the tests): see servers.py."""

from __future__ import annotations

from servers import gcs_server, s3_server, smtpd, sshd  # noqa: F401
from sql_http_servers import (  # noqa: F401 (the SQL and HTTP provider tests' servers)
    http_server,
    maria_conn,
    maria_scratch_database,
    pg_conn,
    pg_scratch_database,
    sqlite_conn,
    web_conn,
)
