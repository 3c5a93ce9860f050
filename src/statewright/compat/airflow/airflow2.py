"""Airflow 2 spellings and what they become, as data: moved modules, renamed names, renamed or
dropped arguments, context keys, and the defaults Airflow 2 had.

``names.py`` says which statewright modules answer for an Airflow module; this module says
how an Airflow 2 file's older spelling maps onto the Airflow 3 one. ``adapt.py`` applies the
argument tables to the classes the layer hands out, ``resolver.py`` the module and name tables,
``scan.py`` reports every entry a file uses (``dags check --airflow``). See
docs/decisions/airflow2-files.md. Nothing here imports statewright's modules.
"""

from __future__ import annotations

DEFAULTS_ENV_VAR = "STATEWRIGHT_AIRFLOW2_DEFAULTS"
"""``true``: DAGs built from Airflow 2 spellings get Airflow 2's defaults (``AIRFLOW2_DEFAULTS``);
unset or ``false``: Airflow 3's, whatever the file's spelling."""

AIRFLOW2_DEFAULTS: dict[str, tuple[str, str]] = {
    "catchup": ("True", "False"),
    "schedule": ("timedelta(days=1)", "None"),
}
"""DAG argument → (Airflow 2's default, Airflow 3's default), for a DAG that leaves it out."""

_STANDARD = "airflow.providers.standard"
_SQL = "airflow.providers.common.sql"

MOVED_MODULES: dict[str, str] = {
    # Airflow 1.10 / 2 module names of the operators and sensors now in providers.
    "airflow.operators.bash_operator": f"{_STANDARD}.operators.bash",
    "airflow.operators.python_operator": f"{_STANDARD}.operators.python",
    "airflow.operators.dummy_operator": f"{_STANDARD}.operators.empty",
    "airflow.operators.dummy": f"{_STANDARD}.operators.empty",
    "airflow.operators.empty": f"{_STANDARD}.operators.empty",
    "airflow.operators.dagrun_operator": f"{_STANDARD}.operators.trigger_dagrun",
    "airflow.operators.latest_only_operator": f"{_STANDARD}.operators.latest_only",
    "airflow.operators.branch_operator": f"{_STANDARD}.operators.branch",
    "airflow.operators.datetime": f"{_STANDARD}.operators.datetime",
    "airflow.operators.weekday": f"{_STANDARD}.operators.weekday",
    "airflow.operators.docker_operator": "airflow.providers.docker.operators.docker",
    "airflow.operators.email": "airflow.providers.smtp.operators.smtp",
    "airflow.operators.email_operator": "airflow.providers.smtp.operators.smtp",
    "airflow.operators.sql": f"{_SQL}.operators.sql",
    "airflow.operators.check_operator": f"{_SQL}.operators.sql",
    "airflow.operators.sql_branch_operator": f"{_SQL}.operators.sql",
    "airflow.operators.postgres_operator": "airflow.providers.postgres.operators.postgres",
    "airflow.operators.mysql_operator": "airflow.providers.mysql.operators.mysql",
    "airflow.operators.http_operator": "airflow.providers.http.operators.http",
    "airflow.operators.slack_operator": "airflow.providers.slack.operators.slack",
    "airflow.sensors.sql": f"{_SQL}.sensors.sql",
    "airflow.sensors.sql_sensor": f"{_SQL}.sensors.sql",
    "airflow.sensors.external_task_sensor": f"{_STANDARD}.sensors.external_task",
    "airflow.sensors.time_delta_sensor": f"{_STANDARD}.sensors.time_delta",
    "airflow.sensors.time_delta": f"{_STANDARD}.sensors.time_delta",
    "airflow.sensors.time_sensor": f"{_STANDARD}.sensors.time",
    "airflow.sensors.date_time_sensor": f"{_STANDARD}.sensors.date_time",
    "airflow.sensors.date_time": f"{_STANDARD}.sensors.date_time",
    "airflow.sensors.python": f"{_STANDARD}.sensors.python",
    "airflow.sensors.bash": f"{_STANDARD}.sensors.bash",
    "airflow.sensors.filesystem": f"{_STANDARD}.sensors.filesystem",
    "airflow.sensors.weekday": f"{_STANDARD}.sensors.weekday",
    "airflow.sensors.weekday_sensor": f"{_STANDARD}.sensors.weekday",
    "airflow.sensors.http_sensor": "airflow.providers.http.sensors.http",
    "airflow.sensors.hive_partition_sensor":
        "airflow.providers.apache.hive.sensors.hive_partition",
    "airflow.sensors.named_hive_partition_sensor":
        "airflow.providers.apache.hive.sensors.named_hive_partition",
    "airflow.sensors.metastore_partition_sensor":
        "airflow.providers.apache.hive.sensors.metastore_partition",
    "airflow.sensors.web_hdfs_sensor": "airflow.providers.apache.hdfs.sensors.web_hdfs",
    "airflow.operators.hive_operator": "airflow.providers.apache.hive.operators.hive",
    "airflow.operators.mssql_operator": "airflow.providers.microsoft.mssql.operators.mssql",
    "airflow.operators.oracle_operator": "airflow.providers.oracle.operators.oracle",
    "airflow.operators.sqlite_operator": "airflow.providers.sqlite.operators.sqlite",
    "airflow.operators.jdbc_operator": "airflow.providers.jdbc.operators.jdbc",
    "airflow.hooks.dbapi_hook": f"{_SQL}.hooks.sql",
    "airflow.hooks.dbapi": f"{_SQL}.hooks.sql",
    "airflow.hooks.sqlite_hook": "airflow.providers.sqlite.hooks.sqlite",
    "airflow.sensors.s3_key_sensor": "airflow.providers.amazon.aws.sensors.s3",
    "airflow.hooks.base_hook": "airflow.hooks.base",
    "airflow.hooks.postgres_hook": "airflow.providers.postgres.hooks.postgres",
    "airflow.hooks.mysql_hook": "airflow.providers.mysql.hooks.mysql",
    "airflow.hooks.http_hook": "airflow.providers.http.hooks.http",
    "airflow.hooks.S3_hook": "airflow.providers.amazon.aws.hooks.s3",
    "airflow.datasets": "airflow.sdk",
    "airflow.datasets.metadata": "airflow.sdk",
    "airflow.timetables.datasets": "airflow.timetables.assets",
    "airflow.operators.subdag_operator": "airflow.operators.subdag",
    # Airflow 1.10 spellings still found in Airflow 2 folders.
    "airflow.operators.sensors": "airflow.sensors",
    "airflow.contrib.sensors.file_sensor": f"{_STANDARD}.sensors.filesystem",
    "airflow.contrib.sensors.python_sensor": f"{_STANDARD}.sensors.python",
    "airflow.contrib.sensors.bash_sensor": f"{_STANDARD}.sensors.bash",
    "airflow.contrib.operators.ssh_operator": "airflow.providers.ssh.operators.ssh",
    "airflow.contrib.hooks.ssh_hook": "airflow.providers.ssh.hooks.ssh",
    "airflow.contrib.operators.sftp_operator": "airflow.providers.sftp.operators.sftp",
    "airflow.contrib.hooks.sftp_hook": "airflow.providers.sftp.hooks.sftp",
    "airflow.contrib.operators.spark_submit_operator":
        "airflow.providers.apache.spark.operators.spark_submit",
    "airflow.contrib.operators.bigquery_operator":
        "airflow.providers.google.cloud.operators.bigquery",
    "airflow.contrib.operators.kubernetes_pod_operator":
        "airflow.providers.cncf.kubernetes.operators.pod",
    "airflow.contrib.operators.slack_webhook_operator":
        "airflow.providers.slack.operators.slack_webhook",
    # Module names of older provider releases.
    "airflow.providers.amazon.aws.sensors.s3_key": "airflow.providers.amazon.aws.sensors.s3",
    "airflow.providers.amazon.aws.hooks.s3_hook": "airflow.providers.amazon.aws.hooks.s3",
}
"""Airflow 2 module → the module that has its names in Airflow 3 (a provider's, or the SDK's).
A file importing the old name gets what the new one gives; one whose new module statewright
lacks gets the error naming the provider."""

RENAMED_NAMES: dict[str, str] = {
    "Dataset": "Asset",
    "DatasetAlias": "AssetAlias",
    "DatasetAll": "AssetAll",
    "DatasetAny": "AssetAny",
    "DatasetOrTimeSchedule": "AssetOrTimeSchedule",
    "DummyOperator": "EmptyOperator",
}
"""Airflow 2 name → its Airflow 3 name (looked up when the Airflow 2 name itself is missing)."""

DAG_ARGUMENTS: dict[str, str | None] = {
    "schedule_interval": "schedule",
    "timetable": "schedule",
    "concurrency": "max_active_tasks",
    "full_filepath": None,
    "sla_miss_callback": None,
    "default_view": None,
    "orientation": None,
    "access_control": None,
}
"""Airflow 2 DAG argument → its Airflow 3 name; None: accepted and dropped (Airflow 3 has no
such setting, or statewright decides it elsewhere: the UI's view, its own roles)."""

TASK_ARGUMENTS: dict[str, str | None] = {
    "task_concurrency": "max_active_tis_per_dag",
    "xcom_push": "do_xcom_push",
    "execution_date": "logical_date",  # TriggerDagRunOperator
    "provide_context": None,
    "sla": None,
}
"""Airflow 2 operator argument → its Airflow 3 name; None: accepted and dropped. An argument the
operator's class accepts itself is passed through."""

DAG_ATTRIBUTES: dict[str, str] = {
    "schedule_interval": "schedule",
    "concurrency": "max_active_tasks",
}
"""Airflow 2 attribute of a DAG (read by DAG files: ``dag.schedule_interval``) → the Airflow 3
attribute it reads. An instance that sets the name itself keeps its own value."""

TASK_ATTRIBUTES: dict[str, str] = {
    "task_concurrency": "max_active_tis_per_dag",
}
"""The same for a task."""

ARGUMENT_NOTES: dict[str, str] = {
    "provide_context": "accepted and ignored (every callable gets the context keys it names)",
    "sla": "accepted and ignored (Airflow 3 has no SLAs; see deadlines)",
    "sla_miss_callback": "accepted and ignored (Airflow 3 has no SLAs; see deadlines)",
    "full_filepath": "accepted and ignored",
    "default_view": "accepted and ignored (the UI chooses its view)",
    "orientation": "accepted and ignored (the UI chooses its layout)",
    "access_control": "accepted and ignored (statewright's roles decide access)",
}

CONTEXT_KEYS: dict[str, str] = {
    "execution_date": "logical_date",
    "next_execution_date": "the next scheduled run's logical_date (a manual run: its own)",
    "prev_execution_date": "the previous scheduled run's logical_date (a manual run: its own)",
    "next_ds": "next_execution_date as YYYY-MM-DD",
    "next_ds_nodash": "next_execution_date as YYYYMMDD",
    "prev_ds": "prev_execution_date as YYYY-MM-DD",
    "prev_ds_nodash": "prev_execution_date as YYYYMMDD",
    "tomorrow_ds": "logical_date + 1 day as YYYY-MM-DD",
    "tomorrow_ds_nodash": "logical_date + 1 day as YYYYMMDD",
    "yesterday_ds": "logical_date - 1 day as YYYY-MM-DD",
    "yesterday_ds_nodash": "logical_date - 1 day as YYYYMMDD",
    "prev_execution_date_success": "prev_data_interval_start_success",
    "triggering_dataset_events": "triggering_asset_events",
}
"""Airflow 2 context / template key → its meaning in Airflow 3 terms (each run's context has
them under the compatibility layer)."""

CALLS: dict[str, str] = {
    "days_ago": "a start date of midnight UTC N days before the file is parsed (it moves every "
                "day, as in Airflow 2; prefer a fixed date)",
    "SubDagOperator": "a task group holding the sub-DAG's tasks (its tasks run in the parent's "
                      "run; the sub-DAG is not a DAG of its own)",
}
"""Airflow 2 helpers and classes removed in Airflow 3 that the layer still answers → what a
call becomes (for ``dags check``)."""

AIRFLOW3_ONLY_PREFIXES = ("airflow.sdk", "airflow.providers.standard")
"""Modules that exist only in Airflow 3: their names are handed out as they are (no Airflow 2
argument spellings, Airflow 3 defaults)."""
