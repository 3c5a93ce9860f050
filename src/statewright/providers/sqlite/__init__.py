"""SQLite (Airflow's sqlite provider): ``SqliteHook``, ``SqliteOperator``."""
