/* statewright web UI: the run page's Gantt chart, drawn by uPlot (vendored in static/vendor/).
   One lane per task instance that started, in the order they started; its bar runs from when
   its latest try was queued (grey) through its start to its end (coloured by its state; a
   running one up to now). uPlot gives the time axis, the scales and the cursor; the bars are
   drawn in its draw hook. Hovering a bar names it. Loaded with `defer`, after app.js. */
"use strict";

window.statewrightGantt = (() => {
  const box = document.getElementById("run-gantt");
  const data = pageData();
  if (!box || !data || !data.run) return null;
  const { dag_id: dagId, dag_run_id: runId } = data.run;
  const state = { tis: data.task_instances || { task_instances: [] }, run: data.run, chart: null, lanes: [] };
  const colours = new Map();
  const secs = (iso) => (iso ? new Date(iso).getTime() / 1000 : null);

  function colour(stateName) {
    if (!colours.has(stateName)) {
      const probe = el("span", { class: `s-${stateName}`, hidden: true });
      document.body.append(probe);
      colours.set(stateName, getComputedStyle(probe).getPropertyValue("--c").trim() || "#8c959f");
      probe.remove();
    }
    return colours.get(stateName);
  }

  /** The lanes: each started task instance with its queued, start and end times (seconds). */
  function lanesOf(tis) {
    const now = Date.now() / 1000;
    return tis.task_instances.filter((t) => t.start_date)
      .map((t) => ({
        label: tiLabel(t.task_id, t.map_index), state: t.state, try_number: t.try_number,
        queued: secs(t.queued_at), start: secs(t.start_date),
        end: secs(t.end_date) ?? (t.state === "running" ? now : secs(t.start_date)),
      }))
      .sort((a, b) => a.start - b.start || a.label.localeCompare(b.label));
  }

  function drawBars(u) {
    const { ctx } = u;
    const n = state.lanes.length;
    const h = Math.max(4, Math.min(18 * devicePixelRatio,
      0.6 * Math.abs(u.valToPos(0, "y", true) - u.valToPos(1, "y", true))));
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    state.lanes.forEach((lane, i) => {
      const y = u.valToPos(n - 1 - i, "y", true) - h / 2;
      const x = (t) => u.valToPos(t, "x", true);
      if (lane.queued !== null && lane.queued < lane.start) {
        ctx.fillStyle = colour("queued");
        ctx.fillRect(x(lane.queued), y, x(lane.start) - x(lane.queued), h);
      }
      ctx.fillStyle = colour(lane.state);
      ctx.fillRect(x(lane.start), y, Math.max(2, x(lane.end) - x(lane.start)), h);
    });
    ctx.restore();
  }

  function options(width) {
    const n = state.lanes.length;
    const times = state.lanes.flatMap((l) => [l.queued ?? l.start, l.end]);
    const t0 = Math.min(...times);
    const t1 = Math.max(t0 + 0.001, ...times);  // a run of milliseconds fills the chart too
    const longest = Math.max(...state.lanes.map((l) => l.label.length));
    const grid = { stroke: getComputedStyle(document.documentElement)
      .getPropertyValue("--line").trim() || "#d0d7de", width: 1 };
    return {
      width, height: Math.min(900, 60 + 30 * n),
      series: [{}, { label: "", stroke: "transparent", points: { show: false } }],
      scales: { x: { time: true, range: [t0 - (t1 - t0) * 0.01, t1 + (t1 - t0) * 0.01] },
                y: { range: [-0.5, n - 0.5] } },
      axes: [
        { grid, space: 90 },
        { grid: { show: false }, size: Math.min(260, 16 + 7 * longest),
          splits: () => state.lanes.map((_, i) => i),
          values: (u, splits) => splits.map((v) => (state.lanes[n - 1 - v] || {}).label || "") },
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false }, y: false },
      legend: { show: false },
      hooks: { draw: [drawBars] },
    };
  }

  function describe(u, left, top) {
    const n = state.lanes.length;
    const lane = state.lanes[n - 1 - Math.round(u.posToVal(top, "y"))];
    if (!lane) return "";
    const t = u.posToVal(left, "x");
    if (t < (lane.queued ?? lane.start) || t > lane.end) return "";
    return `${lane.label} · ${lane.state} · try ${lane.try_number}` +
      (lane.queued !== null ? ` · queued ${dur(Math.max(0, lane.start - lane.queued))}` : "") +
      ` · ran ${dur(lane.end - lane.start)}`;
  }

  function draw() {
    state.lanes = lanesOf(state.tis);
    if (state.chart) state.chart.destroy();
    state.chart = null;
    box.replaceChildren();
    if (!state.lanes.length) {
      box.append(el("p", { class: "muted small", text: "No task instance has started yet." }));
      return;
    }
    const width = Math.max(320, box.clientWidth);
    const u = new uPlot(options(width), [[0, 1], [null, null]], box);
    u.over.addEventListener("mousemove", (e) => {
      u.over.title = describe(u, e.offsetX, e.offsetY);
    });
    state.chart = u;
  }

  async function refresh() {
    const base = `/dags/${enc(dagId)}/dagRuns/${enc(runId)}`;
    try {
      [state.run, state.tis] = await Promise.all([api(base), api(`${base}/taskInstances`)]);
    } catch (_) { /* the run page reports errors */ }
    draw();
    if (UNFINISHED_RUN.has(state.run.state)) setTimeout(refresh, LIVE_MS);
  }

  draw();
  if (UNFINISHED_RUN.has(state.run.state)) setTimeout(refresh, LIVE_MS);
  fitChartToBox(box, () => state.chart);
  return { chart: () => state.chart, lanes: () => state.lanes };
})();
