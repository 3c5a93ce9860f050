"""What the layer itself answers for Airflow 2 modules and helpers that Airflow 3 removed:
``days_ago`` and ``apply_defaults`` (``dates``), ``airflow.settings`` and
``airflow.configuration.conf`` (``settings``), ``SubDagOperator`` (``subdag``) and Airflow 2's
context keys (``context``). Each module is named in ``names.MODULES``; nothing here is imported
until a DAG file asks for it."""
