/* statewright web UI: the Browse › DAG runs page, the runs of every DAG (GET
   /api/v2/dags/~/dagRuns), newest first by default; drawn by browse_table.js. */
"use strict";

(() => {
  const c = window.statewrightBrowse.cells;
  window.statewrightBrowse.start({
    path: () => "/dags/~/dagRuns",
    rows: "dag_runs",
    order: "-run_after",
    columns: [
      { label: "DAG", sort: "dag_id", cell: (r) => c.dag(r.dag_id) },
      { label: "Run", sort: "run_id", cell: (r) => c.run(r.dag_id, r.dag_run_id) },
      { label: "State", sort: "state", cell: (r) => c.state(r) },
      // statewright's own type where Airflow's set has none (a flow's run: "flow")
      { label: "Run type", sort: "run_type", cell: (r) => r.statewright_run_type || r.run_type },
      { label: "Logical date", sort: "logical_date", cell: (r) => c.time(r.logical_date) },
      { label: "Run after", sort: "run_after", cell: (r) => c.time(r.run_after) },
      { label: "Started", sort: "start_date", cell: (r) => c.time(r.start_date) },
      { label: "Duration", cell: (r) => (r.start_date ? dur(runDuration(r)) : "") },
    ],
  });
})();
