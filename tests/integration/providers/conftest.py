"""The provider tests' servers (started by the tests): see servers.py."""

from __future__ import annotations

from servers import s3_server, smtpd, sshd  # noqa: F401
