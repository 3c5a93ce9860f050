/* statewright web UI: the DAG page's grid (run bars, a cell per task instance, the chosen
   task instance's panel, kept live). Uses app.js's helpers, grid_cells.js and mapping.js. */
"use strict";

// -- page: DAG (grid) ------------------------------------------------------------------------

function cellTitle(row, run, c) {
  let t = `${row.task_id} · ${run.dag_run_id}\n${c.state_name} (${c.state}) · try ${c.try_number}`;
  if (c.duration !== null && c.duration !== undefined) t += ` · ${dur(c.duration)}`;
  if (c.state_message) t += `\n${c.state_message}`;
  return t;
}

/* A big grid (more than LAZY.cells cells) draws the cells of its first LAZY.firstRows rows at
   once and of every other row when it comes near the window (an IntersectionObserver): a row
   waits as one empty cell of the row's height. Drawing and laying out 25,000 cells took
   seconds; the rows in view take a few milliseconds. Rows, their order and their labels are
   all there at once (task groups and mapped rows arrange them as before). */
const LAZY = { cells: 5000, firstRows: 60, margin: "800px 0px", ...window.statewrightGridLazy };
let lazyObserver = null;
const nearWindow = new Set(); // the tasks whose rows were near the window when last seen

function lazyRows(grid) {
  if (lazyObserver) lazyObserver.disconnect();
  lazyObserver = null;
  const span = grid.dag_runs.length;
  if (grid.rows.length * span <= LAZY.cells) {
    return { row: (index, tr, cells) => { tr.append(...cells()); return tr; } };
  }
  const pending = new Map(); // a row waiting → its cells
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const taskId = entry.target.dataset.row;
      if (entry.isIntersecting) nearWindow.add(taskId); else nearWindow.delete(taskId);
      const cells = entry.isIntersecting && pending.get(entry.target);
      if (!cells) continue;
      pending.delete(entry.target);
      entry.target.lastElementChild.replaceWith(...cells());
    }
  }, { rootMargin: LAZY.margin });
  lazyObserver = observer;
  return {
    row: (index, tr, cells, taskId) => {
      tr.dataset.row = taskId;
      observer.observe(tr);
      // a row near the window when the grid was drawn last (a refresh) is drawn at once
      if (index < LAZY.firstRows || nearWindow.has(taskId)) { tr.append(...cells()); return tr; }
      tr.classList.add("lazy-row");
      tr.append(el("td", { class: "lazy-cells", colspan: span }));
      pending.set(tr, cells);
      return tr;
    },
  };
}

function renderGrid(grid, dagId, selected, onSelect) {
  const runs = grid.dag_runs;
  const durations = runs.map(runDuration);
  const longest = Math.max(1e-9, ...durations.filter((d) => d !== null));
  const head = el("tr", {}, el("th", { class: "task muted small" },
    runs.length ? "" : "no runs yet"),
  ...runs.map((r, i) => {
    // proportional to the run's duration (60 px the longest), at least 2 px to be seen
    const h = durations[i] === null ? 2 : Math.max(2, Math.round(60 * durations[i] / longest));
    const version = r.dag_version_number ? `v${r.dag_version_number}` : null;
    return el("th", { class: "runbar-cell" + (r.version_changed ? " version-change" : ""),
                      dataset: { version: version || "" } },
    r.version_changed ? el("span", { class: "version-mark",
      title: `DAG ${version} from this run on` }, version) : null,
    runTypeMark(r.run_type), el("a", {
      class: `runbar s-${r.state}`, href: runUrl(dagId, r.dag_run_id), style: `height:${h}px`,
      title: `${r.dag_run_id}\n${r.state_name} (${r.state})` + (version ? ` · DAG ${version}` : "") +
        (durations[i] !== null ? ` · ${dur(durations[i])}` : "") +
        (r.run_after ? `\n${fmtTime(r.run_after)}` : ""),
      "aria-label": `run ${r.dag_run_id}: ${r.state_name}`,
    }));
  }));
  const mapping = window.statewrightMapping;
  const cellsOf = (row) => row.instances.map((c, i) => {
    if (!c) return el("td", {}, el("span", { class: "cell empty" }));
    const run = runs[i];
    const isSel = selected && selected.run_id === run.dag_run_id && selected.task_id === row.task_id;
    return el("td", {}, el("button", {
      class: `cell s-${c.state} n-${c.state_name}` + (isSel ? " selected" : "") +
        (c.map_count ? " mapped" : ""),
      title: cellTitle(row, run, c),
      dataset: { taskId: row.task_id, runId: run.dag_run_id, state: c.state, name: c.state_name },
      onclick: () => (c.map_count && mapping ? mapping.expand(dagId, row, runs)
        : onSelect(run.dag_run_id, row.task_id)),
    }, c.map_count ? String(c.map_count) : c.try_number > 1 ? String(c.try_number) : ""));
  });
  const lazy = lazyRows(grid);
  const body = grid.rows.flatMap((row, index) => [lazy.row(index, el("tr", {},
    el("th", { class: "task" + (row.in_dag ? "" : " gone"), title: row.in_dag
      ? `${row.task_id} (${row.operator_name || row.operator || "task"}${row.role ? `, ${row.role} task` : ""})`
      : `${row.task_id}: no longer in the DAG`, dataset: { taskId: row.task_id } },
    row.is_mapped && mapping ? mapping.toggle(dagId, row, runs) : null,
    row.task_id, row.role ? el("span", { class: `role role-${row.role}` }, row.role) : null,
    !row.in_dag && row.version_number ? el("span", { class: "gone-version",
      title: `in the DAG up to version ${row.version_number}` }, `v${row.version_number}`) : null)),
  () => cellsOf(row), row.task_id), ...(row.is_mapped && mapping ? mapping.subRows(dagId, row, runs, selected, onSelect) : [])]);
  const dates = el("tr", { class: "run-dates" }, el("th", { class: "task" }),
    ...runs.map((r) => el("th", {}, el("span", { class: "run-date",
      title: `${r.dag_run_id}\n${r.logical_date ? "logical date" : "run after"}: ` +
        fmtTime(r.logical_date || r.run_after) }, shortDate(r.logical_date || r.run_after)))));
  return el("table", { class: "grid" }, el("thead", {}, head, dates), el("tbody", {}, body));
}

function initDag() {
  const data = pageData();
  const dag = data.dag;
  const cells = window.statewrightGridCells;  // grid_cells.js: the compact grid's cells
  let grid = cells.decode(data.grid);
  let offset = grid.offset;
  let selected = data.open.run_id && data.open.task_id ? { ...data.open } : null;
  let poller = null;
  const refreshNow = () => { if (poller) poller.now(); };
  const panel = new TaskPanel($("#panel"), {
    onClose: () => { selected = null; draw(); setUrl(); },
    onChange: refreshNow,
  });

  const setUrl = () => {
    const p = new URLSearchParams();
    if (offset) p.set("offset", offset);
    if (selected) {
      p.set("run_id", selected.run_id);
      p.set("task_id", selected.task_id);
      if (selected.map_index >= 0) p.set("map_index", selected.map_index);
    }
    const qs = p.toString();
    history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
  };
  const select = (runId, taskId, mapIndex = -1) => {
    selected = { run_id: runId, task_id: taskId, map_index: mapIndex };
    draw();
    setUrl();
    panel.open(dag.dag_id, runId, taskId, null, mapIndex);
  };
  if (window.statewrightMapping) window.statewrightMapping.onChange = () => draw();
  const draw = () => {
    $("#grid").replaceChildren(renderGrid(grid, dag.dag_id, selected, select));
    document.dispatchEvent(new CustomEvent("grid:drawn", { detail: { grid, dagId: dag.dag_id } }));
    const n = grid.dag_runs.length;
    const total = grid.total_entries;
    $("#grid-range").textContent = total
      ? `runs ${Math.max(total - offset - n + 1, 1)}–${total - offset} of ${total}` : "";
    $("#grid-older").disabled = offset + grid.limit >= total;
    $("#grid-newer").disabled = offset === 0;
    $("#grid-live").textContent = live() ? "live" : "";
  };
  const live = () => grid.dag_runs.some((r) => UNFINISHED_RUN.has(r.state));
  let drawn = null;
  const refresh = async () => {
    const compact = await api(
      `/dags/${enc(dag.dag_id)}/grid?limit=${grid.limit}&offset=${offset}&${cells.QUERY}`);
    const snapshot = JSON.stringify(compact);
    if (snapshot !== drawn) { drawn = snapshot; grid = cells.decode(compact); draw(); }
    return live() ? LIVE_MS : IDLE_MS;
  };
  $("#grid-older").onclick = () => { offset += grid.limit; setUrl(); refreshNow(); };
  $("#grid-newer").onclick = () => { offset = Math.max(0, offset - grid.limit); setUrl(); refreshNow(); };

  const pauseInput = $("#dag-pause");
  pauseInput.addEventListener("change", async () => {
    try {
      const d = await setPaused(dag.dag_id, !pauseInput.checked);
      dag.is_paused = d.is_paused;
      $("#dag-pause-label").textContent = d.is_paused ? "Paused" : "Active";
      toast(`${dag.dag_id} ${d.is_paused ? "paused" : "unpaused"}`);
      refreshNow();
    } catch (e) {
      pauseInput.checked = !pauseInput.checked;
      toast(e.message, { error: true });
    }
  });
  $("#dag-trigger").onclick = () => openTrigger(dag.dag_id, dag.is_paused, () => {
    offset = 0; setUrl(); refreshNow();
  });

  draw();
  if (selected) {
    panel.open(dag.dag_id, selected.run_id, selected.task_id, null, selected.map_index ?? -1);
  }
  poller = poll(refresh, live() ? LIVE_MS : IDLE_MS);
  liveRefresh({ dag_id: dag.dag_id }, poller, () => panel.stopPoll);
}
