// Mapped tasks in the grid: a mapped task is one row whose cells count its instances and show
// the state they share; the row expands to one row per map index (read from each run's
// .../taskInstances/{task_id}/listMapped), whose cells open the task instance panel. A map
// index's row is labelled by the name its task's map_index_template gave it (the newest run's).
// Loaded before app.js, which calls it from renderGrid. Values are set as text only.
"use strict";

window.statewrightMapping = (() => {
  const expanded = new Set(); // task ids whose rows are open
  const instances = new Map(); // `${task}\u0000${run}` -> [task instance, ...] by map index
  const loading = new Set();
  const loadedAt = new Map(); // task id -> when its instances were last read (ms)
  const mod = { onChange: null };
  const key = (taskId, runId) => `${taskId}\u0000${runId}`;

  async function load(dagId, row, runs) {
    loadedAt.set(row.task_id, Date.now());
    const todo = runs.filter((r) => !loading.has(key(row.task_id, r.dag_run_id)));
    todo.forEach((r) => loading.add(key(row.task_id, r.dag_run_id)));
    await Promise.all(todo.map(async (r) => {
      const k = key(row.task_id, r.dag_run_id);
      try {
        const res = await api(
          `/dags/${enc(dagId)}/dagRuns/${enc(r.dag_run_id)}/taskInstances/${enc(row.task_id)}/listMapped`);
        instances.set(k, res.task_instances);
      } catch (e) {
        instances.set(k, []);
      } finally {
        loading.delete(k);
      }
    }));
    if (mod.onChange) mod.onChange();
  }

  mod.expand = (dagId, row, runs) => {
    if (expanded.has(row.task_id)) expanded.delete(row.task_id);
    else expanded.add(row.task_id);
    if (expanded.has(row.task_id)) load(dagId, row, runs);
    else if (mod.onChange) mod.onChange();
  };

  mod.toggle = (dagId, row, runs) => el("button", {
    class: "map-toggle", title: `${row.task_id} is mapped: show each map index`,
    "aria-expanded": expanded.has(row.task_id) ? "true" : "false",
    onclick: () => mod.expand(dagId, row, runs),
  }, expanded.has(row.task_id) ? "▾" : "▸");

  /** The name map_index_template gave map index i (Airflow's rendered_map_index), in the newest
      run that named it, or null. */
  function renderedName(perRun, i) {
    for (let r = perRun.length - 1; r >= 0; r--) {
      const ti = perRun[r].find((t) => t.map_index === i);
      if (ti && ti.rendered_map_index) return ti.rendered_map_index;
    }
    return null;
  }

  mod.subRows = (dagId, row, runs, selected, onSelect) => {
    if (!expanded.has(row.task_id)) return [];
    // The grid redraws when a run changes: read the instances again, at most every 3 s.
    if (Date.now() - (loadedAt.get(row.task_id) || 0) > 3000) setTimeout(() => load(dagId, row, runs));
    const perRun = runs.map((r) => instances.get(key(row.task_id, r.dag_run_id)) || []);
    const count = Math.max(0, ...perRun.map((tis) => tis.length));
    const rows = [];
    for (let i = 0; i < count; i++) {
      const name = renderedName(perRun, i);
      rows.push(el("tr", { class: "mapped-index" },
        el("th", { class: "task map-index", dataset: { taskId: row.task_id, mapIndex: i },
          title: `${row.task_id} [${i}]` + (name ? `\n${name}` : "") },
        el("span", { class: "map-index-number" }, `[${i}]`),
        name ? el("span", { class: "map-index-name" }, name) : null),
        ...runs.map((run, r) => {
          const ti = perRun[r].find((t) => t.map_index === i);
          if (!ti) return el("td", {}, el("span", { class: "cell empty" }));
          const isSel = selected && selected.run_id === run.dag_run_id &&
            selected.task_id === row.task_id && selected.map_index === i;
          return el("td", {}, el("button", {
            class: `cell s-${ti.state} n-${ti.state_name}` + (isSel ? " selected" : ""),
            title: `${row.task_id} [${i}]${ti.rendered_map_index ? ` ${ti.rendered_map_index}` : ""}` +
              ` · ${run.dag_run_id}\n${ti.state_name} (${ti.state})` +
              ` · try ${ti.try_number}` + (ti.state_message ? `\n${ti.state_message}` : ""),
            dataset: { taskId: row.task_id, runId: run.dag_run_id, mapIndex: i, state: ti.state },
            onclick: () => onSelect(run.dag_run_id, row.task_id, i),
          }, ti.try_number > 1 ? String(ti.try_number) : ""));
        })));
    }
    if (!count) rows.push(el("tr", { class: "mapped-index" },
      el("th", { class: "task map-index muted small" },
        loading.size ? "loading…" : "not expanded yet")));
    return rows;
  };
  return mod;
})();
