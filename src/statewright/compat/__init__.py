"""Compatibility layers for DAG files written for other orchestrators.

``statewright.compat.airflow``: Airflow's module names (``airflow.sdk``, ``airflow.operators.*``,
``airflow.providers.standard.*`` ...) resolved to statewright's own objects, so Airflow DAG files
load unedited; and ``dags check``, which says which files of a folder would.
"""
