"""``PostgresOperator`` (Airflow 2)."""
