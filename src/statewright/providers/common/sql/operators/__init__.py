"""The SQL operators (``operators.sql``)."""
