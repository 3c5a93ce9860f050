/* statewright web UI: the graph view of a DAG. Tasks are boxes laid out left to right by their
   dependencies; a task group is a box around its tasks (laid out inside it first, then placed as
   one block); edges carry their labels; tasks are coloured by their states in the run chosen
   above the graph. Clicking a task opens its task instance, as a click in the grid does.
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

  /* The child of ``groupId`` (a task id, or "g:" + a nested group id) that holds ``taskId``. */
  function childOf(m, taskId, groupId) {
    let key = taskId;
    let group = m.tasks.get(taskId).task_group || null;
    while (group !== groupId) {
      if (group === null) return null;
      key = "g:" + group;
      const g = m.groups.get(group);
      group = g && g.parent ? g.parent : null;
    }
    return key;
  }

  function layers(keys, edges) {
    const preds = new Map(keys.map((k) => [k, []]));
    for (const [a, b] of edges) preds.get(b).push(a);
    const layer = new Map();
    const visiting = new Set();
    const depth = (k) => {
      if (layer.has(k)) return layer.get(k);
      if (visiting.has(k)) return 0; // a cycle between groups: break it here
      visiting.add(k);
      const d = Math.max(-1, ...preds.get(k).map(depth)) + 1;
      visiting.delete(k);
      layer.set(k, d);
      return d;
    };
    keys.forEach(depth);
    return { layer, preds };
  }

  /* Lay out the direct children of a group (null: the DAG); returns its size and relative boxes. */
  function layoutGroup(m, groupId) {
    const keys = [];
    const sizes = new Map();
    const inner = new Map();
    for (const id of m.order) {
      const key = childOf(m, id, groupId);
      if (key === null || sizes.has(key)) continue;
      keys.push(key);
      if (key.startsWith("g:")) {
        const sub = layoutGroup(m, key.slice(2));
        inner.set(key, sub);
        sizes.set(key, { w: sub.w + 2 * PAD, h: sub.h + 2 * PAD + HEADER });
      } else {
        sizes.set(key, { w: NODE_W, h: NODE_H });
      }
    }
    const pairs = new Set();
    for (const e of m.edges) {
      const a = childOf(m, e.from, groupId), b = childOf(m, e.to, groupId);
      if (a !== null && b !== null && a !== b) pairs.add(a + "\u0000" + b);
    }
    const edges = [...pairs].map((p) => p.split("\u0000"));
    const { layer, preds } = layers(keys, edges);
    const columns = [];
    for (const k of keys) (columns[layer.get(k)] = columns[layer.get(k)] || []).push(k);
    const rank = new Map();
    columns.forEach((col, c) => {
      if (c > 0) {
        const bary = (k) => {
          const ps = preds.get(k).filter((p) => rank.has(p));
          return ps.length ? ps.reduce((s, p) => s + rank.get(p), 0) / ps.length : Infinity;
        };
        col.sort((a, b) => bary(a) - bary(b));
      }
      col.forEach((k, i) => rank.set(k, i));
    });
    const heights = columns.map((col) =>
      col.reduce((s, k) => s + sizes.get(k).h, 0) + GAP_Y * Math.max(0, col.length - 1));
    const h = Math.max(0, ...heights);
    const boxes = new Map();
    let x = 0;
    columns.forEach((col, c) => {
      const w = Math.max(...col.map((k) => sizes.get(k).w));
      let y = (h - heights[c]) / 2;
      for (const k of col) {
        const s = sizes.get(k);
        boxes.set(k, { x: x + (w - s.w) / 2, y, w: s.w, h: s.h });
        y += s.h + GAP_Y;
      }
      x += w + GAP_X;
    });
    return { w: Math.max(0, x - GAP_X), h, boxes, inner };
  }

  /* Absolute boxes of every task and group. */
  function place(layout, ox, oy, tasks, groups) {
    for (const [key, b] of layout.boxes) {
      const box = { x: ox + b.x, y: oy + b.y, w: b.w, h: b.h };
      if (key.startsWith("g:")) {
        groups.set(key.slice(2), box);
        place(layout.inner.get(key), box.x + PAD, box.y + PAD + HEADER, tasks, groups);
      } else {
        tasks.set(key, box);
      }
    }
  }

  /* -- drawing --------------------------------------------------------------------------------- */

  function taskLabel(m, task) {
    const g = task.task_group;
    return g && task.task_id.startsWith(g + ".") ? task.task_id.slice(g.length + 1) : task.task_id;
  }

  function draw(box, m, states, onPick) {
    const layout = layoutGroup(m, null);
    const tasks = new Map(), groups = new Map();
    place(layout, MARGIN, MARGIN, tasks, groups);
    const root = svg("svg", { class: "graph", width: layout.w + 2 * MARGIN,
                              height: layout.h + 2 * MARGIN, role: "img",
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
    for (const e of m.edges) {
      const a = tasks.get(e.from), b = tasks.get(e.to);
      if (!a || !b) continue;
      const x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2;
      const dx = Math.max(24, (x2 - x1) / 2);
      const gEl = svg("g", { class: "graph-edge", "data-from": e.from, "data-to": e.to });
      gEl.append(svg("path", { d: `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`,
                               "marker-end": "url(#graph-arrow)" }));
      if (e.label) {
        const mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
        const text = fit(e.label, 160);
        const w = text.length * 6.6 + 10;
        gEl.append(svg("rect", { x: mx - w / 2, y: my - 9, width: w, height: 18, rx: 4,
                                 class: "graph-edge-label-bg" }));
        gEl.append(svg("text", { x: mx, y: my + 4, "text-anchor": "middle",
                                 class: "graph-edge-label" }, text));
      }
      root.append(gEl);
    }
    for (const [id, b] of tasks) {
      const t = m.tasks.get(id);
      const st = states.get(id);
      const gEl = svg("g", { class: `graph-node ${st ? "s-" + st.state : "no-state"}`,
                             "data-task-id": id, "data-state": st ? st.state : "",
                             tabindex: 0, role: "button" });
      gEl.append(svg("title", {}, `${id} (${t.operator})` +
        (st ? `\n${st.state_name} (${st.state}) · try ${st.try_number}` : "")));
      gEl.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 6 }));
      gEl.append(svg("text", { x: b.x + 10, y: b.y + 15, class: "graph-node-label" },
                     fit(taskLabel(m, t), b.w - 20)));
      gEl.append(svg("text", { x: b.x + 10, y: b.y + 28, class: "graph-node-sub" },
                     fit(st ? st.state_name : t.operator, b.w - 20)));
      gEl.addEventListener("click", () => onPick(id));
      gEl.addEventListener("keydown", (ev) => { if (ev.key === "Enter") onPick(id); });
      root.append(gEl);
    }
    box.replaceChildren(root);
  }

  /* -- page wiring ----------------------------------------------------------------------------- */

  function init() {
    const wrap = document.getElementById("graph-wrap");
    const dataNode = document.getElementById("page-data");
    if (!wrap || !dataNode) return;
    const dag = JSON.parse(dataNode.textContent).dag;
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
    const redraw = () => { if (!wrap.hidden) draw(canvas, m, statesOf(), pick); };
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
