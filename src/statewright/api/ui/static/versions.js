/* statewright web UI: the version selector of the graph view. "of the run" draws the structure of
   the DAG version the chosen run was created with; a version number draws that version's. The
   structures come from GET /api/v1/dags/{dag_id}/dagVersions/{n} (each fetched once) and go to
   graph.js as a "graph:structure" event. Values are set as text, never as HTML. */
"use strict";

(() => {
  const select = document.getElementById("graph-version");
  const runSelect = document.getElementById("graph-run");
  const data = pageData();
  if (!select || !runSelect || !data) return;
  const dagId = data.dag.dag_id;
  const base = `/api/v1/dags/${encodeURIComponent(dagId)}/dagVersions`;
  const cache = new Map();
  let grid = null;
  let shown = null;

  const getJson = async (path) => {
    const res = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    return res.json();
  };
  const structure = (n) => {
    if (!cache.has(n)) cache.set(n, getJson(`${base}/${n}`));
    return cache.get(n);
  };
  const runVersion = () => {
    if (!grid) return null;
    const run = grid.dag_runs.find((r) => r.dag_run_id === runSelect.value);
    return run ? run.dag_version_number : null;
  };
  const apply = async () => {
    const n = select.value ? Number(select.value) : runVersion();
    if (!n || n === shown) return;
    try {
      const detail = await structure(n);
      shown = n;
      select.dataset.shown = String(n);
      document.dispatchEvent(new CustomEvent("graph:structure", { detail: { dag: detail } }));
    } catch (_) { /* no such version (pruned): keep the structure drawn */ }
  };
  const fill = async () => {
    try {
      const list = await getJson(base);
      const keep = select.value;
      const options = [new Option("of the run", "")];
      for (const v of [...list.dag_versions].reverse()) {
        options.push(new Option(v.version_name, String(v.version_number)));
      }
      select.replaceChildren(...options);
      select.value = keep;
    } catch (_) { /* the selector keeps "of the run" */ }
  };
  select.addEventListener("change", apply);
  runSelect.addEventListener("change", () => { if (!select.value) apply(); });
  document.addEventListener("grid:drawn", (event) => {
    grid = event.detail.grid;
    if (!select.value) setTimeout(apply, 0); // after graph.js picked its run
  });
  fill();
})();
