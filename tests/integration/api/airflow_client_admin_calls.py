"""Run by the official ``apache-airflow-client`` in its own virtualenv (not collected by pytest):
the admin side of a team's script against ``/api/v2`` — bulk changes, filtered lists, DAG
versions and sources, HITL, config, jobs, plugins, providers, DAG stats, tags and warnings, one
import error and event log, assets, aliases and queued events. argv: the server's URL, a
username, its password, the DAG id, the HITL DAG id and run id. Prints one JSON object: each
call's answer, or its error status."""

from __future__ import annotations

import json
import sys

import airflow_client.client as af
from airflow_client_common import call, out, token

url, username, password, dag_id, hitl_dag, hitl_run = sys.argv[1:7]
api = af.ApiClient(af.Configuration(host=url, access_token=token(url, username, password)))

conns, variables, pools = af.ConnectionApi(api), af.VariableApi(api), af.PoolApi(api)
call("bulk_connections", lambda: conns.bulk_connections(af.BulkBodyConnectionBody.from_dict(
    {"actions": [
        {"action": "create", "entities": [
            {"connection_id": "bulk_a", "conn_type": "postgres", "host": "a.internal"},
            {"connection_id": "bulk_b", "conn_type": "http", "host": "b.internal"}]},
        {"action": "update", "update_mask": ["host"], "entities": [
            {"connection_id": "bulk_a", "conn_type": "postgres", "host": "a2.internal"}]},
        {"action": "delete", "action_on_non_existence": "skip",
         "entities": ["bulk_b", "never_was"]}]})))
call("connections_filtered", lambda: conns.get_connections(connection_id_pattern="bulk",
                                                           order_by=["-connection_id"]))
call("bulk_variables", lambda: variables.bulk_variables(af.BulkBodyVariableBody.from_dict(
    {"actions": [{"action": "create", "entities": [{"key": "v_one", "value": "1"},
                                                    {"key": "v_two", "value": "2"}]},
                 {"action": "create", "entities": [{"key": "v_one", "value": "x"}]}]})))
call("variables_filtered", lambda: variables.get_variables(variable_key_prefix_pattern="v_",
                                                           order_by=["-key"]))
call("bulk_pools", lambda: pools.bulk_pools(af.BulkBodyPoolBody.from_dict({"actions": [
    {"action": "create", "entities": [{"name": "bulk_pool", "slots": 4}]},
    {"action": "update", "entities": [{"name": "bulk_pool", "slots": 6}]}]})))
call("pools_filtered", lambda: pools.get_pools(pool_name_pattern="bulk"))

call("dag_versions", lambda: af.DagVersionApi(api).get_dag_versions(dag_id))
call("dag_version", lambda: af.DagVersionApi(api).get_dag_version(dag_id, 1))
call("dag_source", lambda: af.DagSourceApi(api).get_dag_source(dag_id))

tis = af.TaskInstanceApi(api)
call("hitl_details", lambda: tis.get_hitl_details(hitl_dag, hitl_run))
call("hitl_detail", lambda: tis.get_hitl_detail(hitl_dag, hitl_run, "approve", -1))
call("hitl_answer", lambda: tis.update_hitl_detail(hitl_dag, hitl_run, "approve", -1,
                                                   af.UpdateHITLDetailPayload(
                                                       chosen_options=["yes"])))
call("hitl_answer_again", lambda: tis.update_hitl_detail(
    hitl_dag, hitl_run, "approve", -1, af.UpdateHITLDetailPayload(chosen_options=["no"])))

call("config", lambda: af.ConfigApi(api).get_config(section="core"))
call("config_value", lambda: af.ConfigApi(api).get_config_value("core", "parallelism"))
call("jobs", lambda: af.JobApi(api).get_jobs())
call("plugins", lambda: af.PluginApi(api).get_plugins())
call("providers", lambda: af.ProviderApi(api).get_providers())
call("dag_stats", lambda: af.DagStatsApi(api).get_dag_stats(dag_ids=[dag_id]))
call("dag_tags", lambda: af.DAGApi(api).get_dag_tags())
call("dag_warnings", lambda: af.DagWarningApi(api).list_dag_warnings())
errors = call("import_errors", lambda: af.ImportErrorApi(api).get_import_errors())
call("import_error", lambda: af.ImportErrorApi(api).get_import_error(
    errors.import_errors[0].import_error_id))
logs = call("event_logs", lambda: af.EventLogApi(api).get_event_logs(
    event_pattern="bulk", order_by=["-when"]))
call("event_log", lambda: af.EventLogApi(api).get_event_log(logs.event_logs[0].event_log_id))

assets = af.AssetApi(api)
listed = call("assets", lambda: assets.get_assets(name_prefix_pattern="ord"))
asset_id = listed.assets[0].id
call("asset", lambda: assets.get_asset(asset_id))
aliases = call("aliases", lambda: assets.get_asset_aliases())
call("alias", lambda: assets.get_asset_alias(aliases.asset_aliases[0].id))
call("create_event", lambda: assets.create_asset_event(af.CreateAssetEventsBody(
    asset_id=asset_id, extra={"rows": 1})))
call("events", lambda: assets.get_asset_events(asset_id=asset_id, order_by=["-timestamp"]))
call("queued", lambda: assets.get_asset_queued_events(asset_id))
call("dag_queued", lambda: assets.get_dag_asset_queued_event("on_orders", asset_id))
call("delete_queued", lambda: assets.delete_dag_asset_queued_events("on_orders"))
call("queued_after", lambda: assets.get_asset_queued_events(asset_id))
print(json.dumps(out, default=str))
