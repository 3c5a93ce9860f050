"""``SqliteOperator`` (Airflow 2)."""
