"""PostgreSQL (Airflow's postgres provider): ``PostgresHook``, ``PostgresOperator``."""
