"""Airflow's http provider: ``HttpHook``, ``HttpOperator``, ``HttpSensor``."""
