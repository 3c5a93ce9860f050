/* statewright web UI: the Browse › Task instances page, the task instances of every run of
   every DAG (GET /api/v2/dags/~/dagRuns/~/taskInstances), the latest started first by default;
   drawn by browse_table.js. */
"use strict";

(() => {
  const c = window.statewrightBrowse.cells;
  window.statewrightBrowse.start({
    path: () => "/dags/~/dagRuns/~/taskInstances",
    rows: "task_instances",
    order: "-id",
    columns: [
      { label: "DAG", sort: "dag_id", cell: (r) => c.dag(r.dag_id) },
      { label: "Run", sort: "run_id", cell: (r) => c.run(r.dag_id, r.dag_run_id) },
      { label: "Task", sort: "task_id",
        cell: (r) => c.task(r.dag_id, r.dag_run_id, r.task_id, r.map_index) },
      { label: "Map index", sort: "map_index",
        cell: (r) => r.rendered_map_index || c.mapIndex(r.map_index) },
      { label: "State", sort: "state", cell: (r) => c.state(r) },
      { label: "Try", sort: "try_number", cell: (r) => String(r.try_number) },
      { label: "Operator", sort: "operator", cell: (r) => r.operator_name || r.operator || "" },
      { label: "Started", sort: "start_date", cell: (r) => c.time(r.start_date) },
      { label: "Duration", sort: "duration", cell: (r) => dur(r.duration) },
    ],
  });
})();
