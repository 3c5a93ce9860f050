"""``HttpOperator`` and Airflow 2's ``SimpleHttpOperator``."""
