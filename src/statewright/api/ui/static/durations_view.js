/* statewright web UI: the DAG page's Durations tab (address: #durations). A bar chart, drawn by
   uPlot (vendored in static/vendor/), of how long each of the DAG's last runs took, oldest on the
   left; with a task chosen, a second bar per run shows how long that task's instance took (a
   mapped task: from its first instance's start to its last one's end, once all ended). Read
   from the grid API (one request gives the runs and their task instances). Clicking a bar
   opens the run. Loaded with `defer`, after app.js; uPlot (51 KB) is loaded when the tab is
   first shown, so the grid opens without compiling it. */
"use strict";

window.statewrightDurations = (() => {
  const tab = window.statewrightViewTab.find("durations-wrap", "view-durations");
  if (!tab) return null;
  const { wrap, button, dagId } = tab;
  const cells = window.statewrightGridCells;
  const box = document.getElementById("durations-chart");
  const runsSelect = document.getElementById("durations-runs");
  const taskSelect = document.getElementById("durations-task");
  const summary = document.getElementById("durations-summary");
  const views = [document.querySelector(".grid-layout"), document.getElementById("legend")];
  const detailsButton = document.getElementById("view-details");
  const state = { grid: null, chart: null, task: "" };

  /** The chart's numbers: x the run's place, oldest first; y seconds (null: not known). */
  function series(grid, taskId) {
    const runs = grid.dag_runs;
    const x = runs.map((_, i) => i);
    const run = runs.map((r) => runDuration(r));
    const row = taskId ? grid.rows.find((r) => r.task_id === taskId) : null;
    const task = row ? row.instances.map((c) => (c ? cellSeconds(c) : null)) : null;
    return { runs, x, run, task };
  }

  const cellSeconds = (cell) => (cell.duration === null || cell.duration === undefined
    ? null : Number(cell.duration));

  const label = (r) => r.logical_date || r.run_after || r.start_date;

  function shortDate(iso) {
    if (!iso) return "";
    const d = new Date(iso);
    return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  function colour(name, fallback) {
    const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
  }

  function options(s, width) {
    const bars = (align) => uPlot.paths.bars({ size: [s.task ? 0.4 : 0.6, 48], align });
    const most = Math.max(1e-3, ...s.run.filter((v) => v !== null),
      ...(s.task || []).filter((v) => v !== null));
    const line = colour("--line", "#d0d7de");
    const ink = colour("--muted", "#656d76");
    const axis = { stroke: ink, grid: { stroke: line, width: 1 }, ticks: { stroke: line } };
    const ser = [
      { label: "Run", value: (u, i) => (s.runs[i] ? s.runs[i].dag_run_id : "–") },
      { label: "Duration", stroke: colour("--accent", "#0969da"), fill: colour("--accent", "#0969da"),
        width: 0, points: { show: false }, paths: bars(s.task ? -1 : 0),
        value: (u, v) => (v === null ? "–" : dur(v)) },
    ];
    if (s.task) {
      ser.push({ label: `Task ${state.task}`, stroke: "#8250df", fill: "#8250df", width: 0,
        points: { show: false }, paths: bars(1), value: (u, v) => (v === null ? "–" : dur(v)) });
    }
    return {
      width, height: 320, series: ser,
      scales: { x: { time: false, range: [-0.5, Math.max(0.5, s.x.length - 0.5)] },
                y: { range: [0, most * 1.1] } },
      axes: [
        { ...axis, splits: () => s.x, values: (u, splits) => splits.map((i) =>
          (s.runs[i] ? shortDate(label(s.runs[i])) : "")), space: 70 },
        { ...axis, size: 70, values: (u, splits) => splits.map((v) => dur(v)) },
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { show: true },
    };
  }

  function draw() {
    if (!state.grid || wrap.hidden) return;
    const s = series(state.grid, state.task);
    if (state.chart) state.chart.destroy();
    box.replaceChildren();
    if (!s.runs.length) {
      state.chart = null;
      box.append(el("p", { class: "muted", text: "No runs yet." }));
      summary.textContent = "";
      return;
    }
    const width = Math.max(320, box.clientWidth || wrap.clientWidth - 32);
    const cols = [s.x, s.run];
    if (s.task) cols.push(s.task);
    state.chart = new uPlot(options(s, width), cols, box);
    state.chart.over.addEventListener("click", () => {
      const i = state.chart.cursor.idx;
      if (i !== null && i !== undefined && s.runs[i]) {
        location.assign(runUrl(dagId, s.runs[i].dag_run_id));
      }
    });
    summary.textContent = describe(s.run);
  }

  function describe(values) {
    const known = values.filter((v) => v !== null).sort((a, b) => a - b);
    if (!known.length) return "";
    const median = known[Math.floor((known.length - 1) / 2)];
    return `${known.length} run${known.length === 1 ? "" : "s"} · median ${dur(median)} · ` +
      `longest ${dur(known[known.length - 1])}`;
  }

  function fillTasks() {
    const ids = state.grid.rows.map((r) => r.task_id);
    if (state.task && !ids.includes(state.task)) state.task = "";
    const opts = [el("option", { value: "", text: "none" })]
      .concat(ids.map((id) => el("option", { value: id, text: id })));
    taskSelect.replaceChildren(...opts);
    taskSelect.value = state.task;
  }

  let uPlotLoaded = null;
  /** uPlot's script (its versioned address is the panel's data-uplot), loaded once. */
  function needUPlot() {
    if (window.uPlot) return Promise.resolve();
    if (!uPlotLoaded) {
      uPlotLoaded = new Promise((resolve, reject) => {
        const script = el("script", { src: wrap.dataset.uplot });
        script.onload = resolve;
        script.onerror = () => { uPlotLoaded = null; reject(new Error("the chart library did not load")); };
        document.head.append(script);
      });
    }
    return uPlotLoaded;
  }

  async function load() {
    try {
      await needUPlot();
      const compact = await api(
        `/dags/${enc(dagId)}/grid?limit=${enc(runsSelect.value)}&offset=0&${cells.QUERY}`);
      state.grid = cells.decode(compact);
    } catch (e) {
      toast(e.message, { error: true });
      return;
    }
    fillTasks();
    draw();
  }

  function show(on) {
    window.statewrightViewTab.toggle(tab, on, views, ["details-wrap"]);
    if (on) {
      history.replaceState(null, "", location.pathname + location.search + "#durations");
      load();
    } else if (location.hash === "#durations") {
      history.replaceState(null, "", location.pathname + location.search);
    }
  }

  button.addEventListener("click", () => show(true));
  for (const id of ["view-grid", "view-graph"]) {
    const b = document.getElementById(id);
    if (b) b.addEventListener("click", () => {
      if (wrap.hidden) return;
      show(false);
      for (const v of views) if (v) v.hidden = false;
    });
  }
  if (detailsButton) detailsButton.addEventListener("click", () => { if (!wrap.hidden) show(false); });
  runsSelect.addEventListener("change", load);
  taskSelect.addEventListener("change", () => { state.task = taskSelect.value; draw(); });
  fitChartToBox(box, () => state.chart);
  window.addEventListener("hashchange", () => { if (location.hash === "#durations") show(true); });
  if (location.hash === "#durations") show(true);
  return { chart: () => state.chart, series: () => (state.grid ? series(state.grid, state.task) : null) };
})();
