/* statewright web UI: the Browse › XComs page, the XCom entries of every task instance (GET
   /api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries; the "DAG id" filter narrows the
   address to one DAG), without their values (the task instance page shows them); drawn by
   browse_table.js. */
"use strict";

(() => {
  const c = window.statewrightBrowse.cells;
  window.statewrightBrowse.start({
    path: (query) => {
      const dagId = query.get("dag_id");
      query.delete("dag_id");
      return `/dags/${dagId ? enc(dagId) : "~"}/dagRuns/~/taskInstances/~/xcomEntries`;
    },
    rows: "xcom_entries",
    order: "-timestamp",
    columns: [
      { label: "DAG", sort: "dag_id", cell: (r) => c.dag(r.dag_id) },
      { label: "Run", sort: "run_id", cell: (r) => c.run(r.dag_id, r.run_id) },
      { label: "Task", sort: "task_id", cell: (r) => c.task(r.dag_id, r.run_id, r.task_id, r.map_index) },
      { label: "Map index", sort: "map_index", cell: (r) => c.mapIndex(r.map_index) },
      { label: "Key", sort: "key", cell: (r) => el("span", { class: "mono", text: r.key }) },
      { label: "Written", sort: "timestamp", cell: (r) => c.time(r.timestamp) },
    ],
  });
})();
