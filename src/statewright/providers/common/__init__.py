"""Airflow's common-sql provider: ``DbApiHook`` and the SQL operators and sensor."""
