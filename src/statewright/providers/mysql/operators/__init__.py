"""``MySqlOperator`` (Airflow 2)."""
