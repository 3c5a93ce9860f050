"""MySQL and MariaDB (Airflow's mysql provider): ``MySqlHook``, ``MySqlOperator``."""
