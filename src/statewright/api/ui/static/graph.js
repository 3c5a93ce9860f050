/* statewright web UI: the graph view of a DAG. Tasks are boxes laid out left to right by their
   dependencies (dagre, vendored in static/vendor/); a task group is a box around its tasks;
   edges carry their labels; tasks are coloured by their states in the run chosen
   above the graph; a mapped task is one node with its count ([12]) and its instances' states. Clicking a task opens its task instance, as a click in the grid does.
   Drawn as SVG by this file; values from the DAG are set as text, never as HTML. */
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const NODE_W = 180, NODE_H = 34, GAP_X = 56, GAP_Y = 14, PAD = 12, HEADER = 22, MARGIN = 16;
  const VIEW_KEY = "statewright.dag.view";

  function svg(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function fit(text, width) {
    const max = Math.max(4, Math.floor(width / 7.2));
    return text.length > max ? text.slice(0, max - 1) + "…" : text;
  }

  /* -- layout ---------------------------------------------------------------------------------- */

  function model(dag) {
    const groups = new Map(dag.task_groups.map((g) => [g.group_id, g]));
    const tasks = new Map(dag.tasks.map((t) => [t.task_id, t]));
    const edges = dag.dependencies.map((d) => ({ from: d.source, to: d.target, label: d.label }));
    return { groups, tasks, edges, order: dag.tasks.map((t) => t.task_id) };
  }

  /* Every task's and group's box and every edge's route, laid out left to right by dagre
     (vendor/dagre.min.js): a layered layout (Sugiyama) with groups as compound nodes. */
  function layout(m) {
    const g = new dagre.graphlib.Graph({ compound: m.groups.size > 0, multigraph: true });
    // tight-tree ranking (compact layers; groups drawn right); a large DAG without groups by
    // longest path, twice as fast (500 tasks well under a second)
    const ranker = m.groups.size === 0 && m.tasks.size > 300 ? "longest-path" : "tight-tree";
    g.setGraph({ rankdir: "LR", nodesep: GAP_Y + HEADER, ranksep: GAP_X, edgesep: 10,
                 marginx: MARGIN, marginy: MARGIN + HEADER, ranker });
    const used = new Set();
    const groupKey = (id) => "g:" + id;
    const addGroup = (id) => {
      if (used.has(id)) return;
      used.add(id);
      g.setNode(groupKey(id), {});
      const parent = m.groups.get(id) && m.groups.get(id).parent;
      if (parent && m.groups.has(parent)) { addGroup(parent); g.setParent(groupKey(id), groupKey(parent)); }
    };
    for (const id of m.order) {
      g.setNode("t:" + id, { width: NODE_W, height: NODE_H });
      const group = m.tasks.get(id).task_group;
      if (group && m.groups.has(group)) { addGroup(group); g.setParent("t:" + id, groupKey(group)); }
    }
    m.edges.forEach((e, i) => {
      if (!m.tasks.has(e.from) || !m.tasks.has(e.to)) return;
      const label = e.label ? fit(e.label, 160) : null;
      g.setEdge("t:" + e.from, "t:" + e.to, label
        ? { label, width: label.length * 6.6 + 10, height: 18, labelpos: "c" } : {}, String(i));
    });
    dagre.layout(g);
    const box = (n) => ({ x: n.x - n.width / 2, y: n.y - n.height / 2, w: n.width, h: n.height });
    const tasks = new Map(m.order.map((id) => [id, box(g.node("t:" + id))]));
    const groups = new Map();
    for (const id of used) {
      const b = box(g.node(groupKey(id)));
      groups.set(id, { x: b.x - PAD, y: b.y - PAD - HEADER, w: b.w + 2 * PAD, h: b.h + 2 * PAD + HEADER });
    }
    const edges = g.edges().map((k) => ({ from: k.v.slice(2), to: k.w.slice(2), ...g.edge(k) }));
    const size = g.graph();
    return { w: size.width + MARGIN, h: size.height + MARGIN, tasks, groups, edges };
  }

  /* -- drawing --------------------------------------------------------------------------------- */

  function taskLabel(m, task) {
    const g = task.task_group;
    return g && task.task_id.startsWith(g + ".") ? task.task_id.slice(g.length + 1) : task.task_id;
  }

  /* A smooth path through an edge's points (a quadratic curve between the midpoints). */
  function route(points) {
    const p = points;
    let d = `M ${p[0].x} ${p[0].y}`;
    for (let i = 1; i < p.length - 1; i++) {
      const mx = (p[i].x + p[i + 1].x) / 2, my = (p[i].y + p[i + 1].y) / 2;
      d += ` Q ${p[i].x} ${p[i].y} ${i === p.length - 2 ? p[i + 1].x : mx} ${i === p.length - 2 ? p[i + 1].y : my}`;
    }
    if (p.length === 2) d += ` L ${p[1].x} ${p[1].y}`;
    return d;
  }

  /* A mapped task's instances by state, most first: "2 success · 1 failed". */
  function mapSummary(cell) {
    const counts = Object.entries(cell.state_counts || {}).filter(([, n]) => n > 0);
    counts.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return counts.map(([state, n]) => `${n} ${state}`).join(" · ");
  }

  /* A thin bar along the node's foot: one segment per state, as wide as its share. */
  function mapBar(b, cell) {
    const counts = Object.entries(cell.state_counts || {}).filter(([, n]) => n > 0);
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    let x = b.x + 3;
    const width = b.w - 6;
    return counts.map(([state, n]) => {
      const w = (width * n) / total;
      const seg = svg("rect", { x, y: b.y + b.h - 5, width: w, height: 3,
                                class: `graph-map-seg s-${state}`, "data-state": state,
                                "data-count": n });
      x += w;
      return seg;
    });
  }

  function draw(box, m, states, onPick, mapped = new Set()) {
    const laid = layout(m);
    const { tasks, groups } = laid;
    const root = svg("svg", { class: "graph", width: laid.w, height: laid.h, role: "img",
                              "aria-label": "Graph of the DAG's tasks" });
    const defs = svg("defs");
    const marker = svg("marker", { id: "graph-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                   markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "graph-arrowhead" }));
    defs.append(marker);
    root.append(defs);
    const depthOf = (id) => { let d = 0, g = m.groups.get(id); while (g && g.parent) { d++; g = m.groups.get(g.parent); } return d; };
    for (const id of [...groups.keys()].sort((a, b) => depthOf(a) - depthOf(b))) {
      const b = groups.get(id), g = m.groups.get(id);
      const gEl = svg("g", { class: "graph-group", "data-group-id": id });
      gEl.append(svg("title", {}, id + (g && g.tooltip ? `\n${g.tooltip}` : "")));
      gEl.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 8 }));
      gEl.append(svg("text", { x: b.x + 10, y: b.y + 16, class: "graph-group-label" },
                     fit(g ? g.label : id, b.w - 20)));
      root.append(gEl);
    }
    for (const e of laid.edges) {
      const gEl = svg("g", { class: "graph-edge", "data-from": e.from, "data-to": e.to });
      gEl.append(svg("path", { d: route(e.points), "marker-end": "url(#graph-arrow)" }));
      if (e.label) {
        const w = e.label.length * 6.6 + 10;
        gEl.append(svg("rect", { x: e.x - w / 2, y: e.y - 9, width: w, height: 18, rx: 4,
                                 class: "graph-edge-label-bg" }));
        gEl.append(svg("text", { x: e.x, y: e.y + 4, "text-anchor": "middle",
                                 class: "graph-edge-label" }, e.label));
      }
      root.append(gEl);
    }
    for (const [id, b] of tasks) {
      const t = m.tasks.get(id);
      const st = states.get(id);
      const isMapped = mapped.has(id);
      const gEl = svg("g", { class: `graph-node ${st ? "s-" + st.state : "no-state"}` +
                               (isMapped ? " mapped" : ""),
                             "data-task-id": id, "data-state": st ? st.state : "",
                             tabindex: 0, role: "button" });
      const counts = isMapped && st ? mapSummary(st) : null;
      gEl.append(svg("title", {}, `${id} (${t.operator})` +
        (st ? `\n${st.state_name} (${st.state}) · try ${st.try_number}` : "") +
        (counts ? `\n${st.map_count} mapped: ${counts}` : "")));
      // a mapped task: one node over a stack, with its count and its instances' states
      if (isMapped) {
        gEl.append(svg("rect", { x: b.x + 4, y: b.y - 4, width: b.w, height: b.h, rx: 6,
                                 class: "graph-node-stack" }));
      }
      gEl.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 6 }));
      const count = isMapped ? `[${st && st.map_count !== null && st.map_count !== undefined
        ? st.map_count : " "}]` : "";
      gEl.append(svg("text", { x: b.x + 10, y: b.y + 15, class: "graph-node-label" },
                     fit(taskLabel(m, t), b.w - 20 - count.length * 7.2)));
      if (isMapped) {
        gEl.append(svg("text", { x: b.x + b.w - 8, y: b.y + 15, "text-anchor": "end",
                                 class: "graph-node-count" }, count));
      }
      gEl.append(svg("text", { x: b.x + 10, y: b.y + 28, class: "graph-node-sub" },
                     fit(counts || (st ? st.state_name : t.operator), b.w - 20)));
      if (counts) gEl.append(...mapBar(b, st));
      gEl.addEventListener("click", () => onPick(id));
      gEl.addEventListener("keydown", (ev) => { if (ev.key === "Enter") onPick(id); });
      root.append(gEl);
    }
    box.replaceChildren(root);
  }

  /* -- page wiring ----------------------------------------------------------------------------- */

  function init() {
    const wrap = document.getElementById("graph-wrap");
    const data = pageData();
    if (!wrap || !data) return;
    const dag = data.dag;
    let m = model(dag);
    const select = document.getElementById("graph-run");
    const canvas = document.getElementById("graph");
    let grid = null;
    let runId = null; // null: the newest run

    const statesOf = () => {
      const out = new Map();
      if (!grid) return out;
      const i = grid.dag_runs.findIndex((r) => r.dag_run_id === runId);
      if (i < 0) return out;
      for (const row of grid.rows) if (row.instances[i]) out.set(row.task_id, row.instances[i]);
      return out;
    };
    const pick = (taskId) => {
      if (!runId) return;
      const cells = document.querySelectorAll("#grid button.cell");
      for (const c of cells) {
        if (c.dataset.taskId === taskId && c.dataset.runId === runId) { c.click(); return; }
      }
    };
    const fillRuns = () => {
      const runs = grid ? [...grid.dag_runs].reverse() : [];
      if (runId === null || !runs.some((r) => r.dag_run_id === runId)) {
        runId = runs.length ? runs[0].dag_run_id : null;
      }
      const options = runs.map((r) => {
        const o = document.createElement("option");
        o.value = r.dag_run_id;
        o.textContent = `${r.dag_run_id} · ${r.state}`;
        o.selected = r.dag_run_id === runId;
        return o;
      });
      if (!options.length) {
        const o = document.createElement("option");
        o.textContent = "no runs yet";
        options.push(o);
      }
      select.replaceChildren(...options);
      select.disabled = !runs.length;
    };
    const mappedTasks = () => new Set(grid ? grid.rows.filter((r) => r.is_mapped)
      .map((r) => r.task_id) : []);
    const redraw = () => { if (!wrap.hidden) draw(canvas, m, statesOf(), pick, mappedTasks()); };
    select.addEventListener("change", () => { runId = select.value; redraw(); });
    // versions.js sends the structure of the DAG version chosen above the graph.
    document.addEventListener("graph:structure", (event) => { m = model(event.detail.dag); redraw(); });
    document.addEventListener("grid:drawn", (event) => {
      grid = event.detail.grid;
      fillRuns();
      redraw();
    });

    const gridWrap = document.getElementById("grid-wrap");
    const tabs = { grid: document.getElementById("view-grid"),
                   graph: document.getElementById("view-graph") };
    const show = (view) => {
      wrap.hidden = view !== "graph";
      gridWrap.hidden = view === "graph";
      for (const [name, button] of Object.entries(tabs)) {
        button.classList.toggle("active", name === view);
        button.setAttribute("aria-pressed", name === view ? "true" : "false");
      }
      try { sessionStorage.setItem(VIEW_KEY, view); } catch (_) { /* private mode */ }
      redraw();
    };
    tabs.grid.addEventListener("click", () => show("grid"));
    tabs.graph.addEventListener("click", () => show("graph"));
    let saved = "grid";
    try { saved = sessionStorage.getItem(VIEW_KEY) || "grid"; } catch (_) { /* private mode */ }
    show(saved === "graph" ? "graph" : "grid");
  }

  init(); // loaded at the end of the page, before app.js draws the grid for the first time
})();
