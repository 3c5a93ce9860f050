"""Run by the official ``apache-airflow-client`` in its own virtualenv (not collected by pytest):
a team's script against ``/api/v2``. argv: the server's URL, a username, its password, the DAG
ids to use (simple, mapped). Prints one JSON object: each call's answer, or its error status."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

import airflow_client.client as af
from airflow_client_common import call, out, token

url, username, password, simple, mapped, run_id = sys.argv[1:7]
part = sys.argv[7] if len(sys.argv) > 7 else "all"  # "task_instances": the calls below only
api = af.ApiClient(af.Configuration(host=url, access_token=token(url, username, password)))


def task_instance_family() -> None:
    """Lists across DAGs and runs (``~``) and their batch forms, notes, mapped instances, the
    mark dry run, a full log, XCom writes, tasks, deleting a run and a DAG."""
    runs, tis, xcoms = af.DagRunApi(api), af.TaskInstanceApi(api), af.XComApi(api)
    call("all_runs", lambda: runs.get_dag_runs("~", state=["success"], order_by=["-dag_id"]))
    call("runs_batch", lambda: runs.get_list_dag_runs_batch("~", af.DAGRunsBatchBody(
        dag_ids=[mapped], page_limit=10)))
    call("all_tis", lambda: tis.get_task_instances("~", "~", state=["success"], limit=100))
    call("tis_batch", lambda: tis.get_task_instances_batch("~", "~", af.TaskInstancesBatchBody(
        dag_ids=[mapped], task_ids=["square"], order_by="-map_index")))
    call("all_xcoms", lambda: xcoms.get_xcom_entries("~", "~", "~"))
    call("list_mapped", lambda: tis.get_mapped_task_instances(mapped, run_id, "square",
                                                              limit=2))
    call("mark_dry_run", lambda: tis.patch_task_instance_dry_run(
        mapped, run_id, "square", af.PatchTaskInstanceBody(new_state="failed",
                                                           include_downstream=True)))
    call("mark_dry_run_mapped", lambda: tis.patch_task_instance_dry_run_by_map_index(
        mapped, run_id, "square", 0, af.PatchTaskInstanceBody(new_state="failed")))
    call("run_note", lambda: runs.patch_dag_run(mapped, run_id, af.DAGRunPatchBody(
        note="checked by ops"), update_mask=["note"]))
    call("ti_note", lambda: tis.patch_task_instance(mapped, run_id, "total",
                                                    af.PatchTaskInstanceBody(note="fine"),
                                                    update_mask=["note"]))
    call("noted_run", lambda: runs.get_dag_run(mapped, run_id))
    call("noted_ti", lambda: tis.get_task_instance(mapped, run_id, "total"))
    call("full_log", lambda: tis.get_log(mapped, run_id, "square", 1, map_index=2,
                                         full_content=True))
    call("xcom_create", lambda: xcoms.create_xcom_entry(mapped, "total", run_id,
                                                        af.XComCreateBody(key="rows", value=3)))
    call("xcom_create_again", lambda: xcoms.create_xcom_entry(
        mapped, "total", run_id, af.XComCreateBody(key="rows", value=4)))
    call("xcom_update", lambda: xcoms.update_xcom_entry(mapped, "total", run_id, "rows",
                                                        af.XComUpdateBody(value=[1, 2])))
    call("xcom_delete", lambda: xcoms.delete_xcom_entry(mapped, "total", run_id, "rows"))
    call("tasks", lambda: af.TaskApi(api).get_tasks(mapped))
    call("task", lambda: af.TaskApi(api).get_task(mapped, "square"))
    call("delete_dag", lambda: af.DAGApi(api).delete_dag(mapped))
    call("delete_run", lambda: runs.delete_dag_run(mapped, run_id))
    call("deleted_run", lambda: runs.get_dag_run(mapped, run_id))


if part == "task_instances":
    task_instance_family()
    print(json.dumps(out, default=str))
    sys.exit(0)
call("version", lambda: af.VersionApi(api).get_version())
call("health", lambda: af.MonitorApi(api).get_health())
dags = af.DAGApi(api)
call("list_dags", lambda: dags.get_dags(limit=10))
call("get_dag", lambda: dags.get_dag(simple))
call("dag_details", lambda: dags.get_dag_details(simple))
call("pause", lambda: dags.patch_dag(simple, af.DAGPatchBody(is_paused=True)))
call("unpause", lambda: dags.patch_dag(simple, af.DAGPatchBody(is_paused=False)))
runs = af.DagRunApi(api)
call("trigger", lambda: runs.trigger_dag_run(simple, af.TriggerDAGRunPostBody(
    dag_run_id="from_client", logical_date=datetime(2026, 1, 2, tzinfo=UTC),
    conf={"source": "client"})))
call("trigger_again", lambda: runs.trigger_dag_run(simple, af.TriggerDAGRunPostBody(
    dag_run_id="from_client", logical_date=datetime(2026, 1, 3, tzinfo=UTC))))
call("list_runs", lambda: runs.get_dag_runs(simple))
call("get_run", lambda: runs.get_dag_run(simple, "from_client"))
call("mark_run", lambda: runs.patch_dag_run(simple, "from_client",
                                           af.DAGRunPatchBody(state="success")))
call("get_missing_run", lambda: runs.get_dag_run(simple, "no_such_run"))
tis = af.TaskInstanceApi(api)
call("list_tis", lambda: tis.get_task_instances(mapped, run_id))
call("get_ti", lambda: tis.get_task_instance(mapped, run_id, "total"))
call("get_mapped_ti", lambda: tis.get_mapped_task_instance(mapped, run_id, "square", 2))
xcoms = af.XComApi(api)
call("list_xcoms", lambda: xcoms.get_xcom_entries(mapped, run_id, "total"))
call("get_xcom", lambda: xcoms.get_xcom_entry(mapped, "total", run_id, "return_value"))
call("get_mapped_xcom", lambda: xcoms.get_xcom_entry(mapped, "square", run_id, "return_value",
                                                     map_index=2))
call("log", lambda: tis.get_log(mapped, run_id, "square", 1, map_index=1))
total = af.ClearTaskInstancesBodyTaskIdsInner("total")
call("clear_dry_run", lambda: tis.post_clear_task_instances(mapped, af.ClearTaskInstancesBody(
    dag_run_id=run_id, dry_run=True, only_failed=False, task_ids=[total])))
# The client cannot read a dry run's answer (any task instance matches both of its oneOf
# schemas, against Airflow too): read it raw.
call("clear_run_dry", lambda: json.loads(runs.clear_dag_run_without_preload_content(
    mapped, run_id, af.DAGRunClearBody(dry_run=True)).data))
call("tries", lambda: tis.get_mapped_task_instance_tries(mapped, run_id, "square", 1))
call("try", lambda: tis.get_task_instance_try_details(mapped, run_id, "total", 1))
call("mark_ti", lambda: tis.patch_task_instance_by_map_index(
    mapped, run_id, "square", 1, af.PatchTaskInstanceBody(new_state="failed")))
call("clear_run", lambda: runs.clear_dag_run(mapped, run_id, af.DAGRunClearBody(
    dry_run=False, only_failed=False)))
call("connections", lambda: af.ConnectionApi(api).get_connections())
call("connection", lambda: af.ConnectionApi(api).get_connection("warehouse"))
conns, variables = af.ConnectionApi(api), af.VariableApi(api)
call("create_connection", lambda: conns.post_connection(af.ConnectionBody(
    connection_id="api_conn", conn_type="http", host="example.org", password="pw")))
call("patch_connection", lambda: conns.patch_connection("api_conn", af.ConnectionBody(
    connection_id="api_conn", conn_type="http", host="api.example.org"),
    update_mask=["host"]))
call("delete_connection", lambda: conns.delete_connection("api_conn"))
call("create_variable", lambda: variables.post_variable(af.VariableBody(
    key="limits", value={"rows": 10}, description="json")))
call("create_variable_again", lambda: variables.post_variable(af.VariableBody(
    key="limits", value="x")))
call("patch_variable", lambda: variables.patch_variable("limits", af.VariableBody(
    key="limits", value="20"), update_mask=["value"]))
call("delete_variable", lambda: variables.delete_variable("limits"))
call("variables", lambda: af.VariableApi(api).get_variables())
call("variable", lambda: af.VariableApi(api).get_variable("region"))
pools = af.PoolApi(api)
call("create_pool", lambda: pools.post_pool(af.PoolBody(name="client_pool", slots=3,
                                                        description="from the client")))
call("create_pool_again", lambda: pools.post_pool(af.PoolBody(name="client_pool", slots=3)))
call("patch_pool", lambda: pools.patch_pool("client_pool", af.PoolPatchBody(slots=5)))
call("get_pool", lambda: pools.get_pool("client_pool"))
call("list_pools", lambda: pools.get_pools())
call("delete_pool", lambda: pools.delete_pool("client_pool"))
call("get_deleted_pool", lambda: pools.get_pool("client_pool"))
call("import_errors", lambda: af.ImportErrorApi(api).get_import_errors())
call("event_logs", lambda: af.EventLogApi(api).get_event_logs(limit=100))
assets = call("assets", lambda: af.AssetApi(api).get_assets())
if assets is not None and assets.assets:
    asset_id = assets.assets[0].id
    call("create_asset_event", lambda: af.AssetApi(api).create_asset_event(
        af.CreateAssetEventsBody(asset_id=asset_id, extra={"rows": 3})))
    call("asset_events", lambda: af.AssetApi(api).get_asset_events(asset_id=asset_id))
backfill_api = af.BackfillApi(api)
made = call("create_backfill", lambda: backfill_api.create_backfill(af.BackfillPostBody(
    dag_id=simple, from_date=datetime(2026, 2, 1, tzinfo=UTC),
    to_date=datetime(2026, 2, 3, tzinfo=UTC), max_active_runs=2,
    reprocess_behavior=af.ReprocessBehavior("failed"))))
if made is not None:
    call("pause_backfill", lambda: backfill_api.pause_backfill(made.id))
    call("unpause_backfill", lambda: backfill_api.unpause_backfill(made.id))
    call("cancel_backfill", lambda: backfill_api.cancel_backfill(made.id))
listed = call("backfills", lambda: af.BackfillApi(api).list_backfills(dag_id=simple))
if listed is not None and listed.backfills:
    call("backfill", lambda: af.BackfillApi(api).get_backfill(listed.backfills[0].id))
print(json.dumps(out, default=str))
