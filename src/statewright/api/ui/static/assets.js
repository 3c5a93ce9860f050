/* statewright web UI: the assets page (asset graph, assets, pending conditions, events) and a
   run's triggering asset events on the run page. Everything from DAG files and events is set as
   text (textContent), never as HTML. Uses app.js's helpers (el, api, pageData, timeEl). */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/* Layers: every node one column right of its rightmost predecessor (a DAG that produces and
   consumes lands between its inputs and outputs); cycles are cut by a visit limit. */
function layers(graph) {
  const preds = new Map(graph.nodes.map((n) => [n.id, []]));
  for (const e of graph.edges) if (preds.has(e.target)) preds.get(e.target).push(e.source);
  const depth = new Map();
  const visit = (id, seen) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id)) return 0;
    seen.add(id);
    const d = Math.max(-1, ...preds.get(id).map((p) => visit(p, seen))) + 1;
    depth.set(id, d);
    return d;
  };
  for (const n of graph.nodes) visit(n.id, new Set());
  const cols = [];
  for (const n of graph.nodes) (cols[depth.get(n.id)] ||= []).push(n);
  return cols.filter(Boolean);
}

function drawGraph(root, graph) {
  root.replaceChildren();
  if (!graph.nodes.length) {
    root.append(el("p", { class: "muted", text: "No asset yet: no DAG declares outlets or an asset schedule." }));
    return;
  }
  const cols = layers(graph);
  const W = 200, H = 34, GX = 90, GY = 18;
  const pos = new Map();
  cols.forEach((col, i) => col.forEach((n, j) => pos.set(n.id, { x: 10 + i * (W + GX), y: 10 + j * (H + GY) })));
  const width = 20 + cols.length * (W + GX) - GX;
  const height = 20 + Math.max(...cols.map((c) => c.length)) * (H + GY) - GY;
  const s = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img" });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "ag-arrow" }));
  defs.append(marker);
  s.append(defs);
  for (const e of graph.edges) {
    const a = pos.get(e.source), b = pos.get(e.target);
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    const mid = (x1 + x2) / 2;
    s.append(svg("path", { d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`, class: "ag-edge", "marker-end": "url(#arrow)" }));
  }
  for (const n of graph.nodes) {
    const p = pos.get(n.id);
    const link = svg("a", { href: n.type === "dag" ? `/dags/${encodeURIComponent(n.label)}` : `#asset-${encodeURIComponent(n.label)}` });
    const g = svg("g", { class: `ag-node ag-${n.type}`, transform: `translate(${p.x},${p.y})` });
    g.append(svg("rect", { width: W, height: H, rx: n.type === "dag" ? 6 : 17 }));
    const label = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
    g.append(svg("text", { x: 12, y: H / 2 + 4 }, (n.type === "alias" ? "alias " : "") + label));
    g.append(svg("title", {}, `${n.type}: ${n.label}`));
    link.append(g);
    s.append(link);
  }
  root.append(s);
}

function dagLink(dagId) {
  return el("a", { href: `/dags/${encodeURIComponent(dagId)}`, text: dagId });
}

function joinNodes(nodes) {
  const out = [];
  nodes.forEach((n, i) => { if (i) out.push(", "); out.push(n); });
  return out;
}

function drawAssets(tbody, assets) {
  tbody.replaceChildren(...assets.map((a) => el("tr", { id: `asset-${encodeURIComponent(a.name)}` },
    el("td", { class: "mono", text: a.name }),
    el("td", { class: "mono", text: a.uri }),
    el("td", {}, ...joinNodes(a.producing_tasks.map((p) => el("span", {}, dagLink(p.dag_id), "." + p.task_id)))),
    el("td", {}, ...joinNodes(a.consuming_dags.map(dagLink))),
    el("td", { text: String(a.events) }),
    el("td", {}, timeEl(a.last_event_at)),
    el("td", {}, ...joinNodes(a.watchers.map((w) => el("span", {
      class: w.failures ? "ag-watch-failing" : "",
      title: w.last_error ? `${w.failures} failure(s); last: ${w.last_error}` : `${w.events} event(s)`,
      text: w.name + (w.failures ? ` (failing ×${w.failures})` : ""),
    })))))));
}

function conditionNode(node) {
  if (node.asset || node.alias) {
    const name = node.asset ? node.asset.name : `alias ${node.alias}`;
    return el("span", { class: `ag-leaf ${node.ready ? "ag-ready" : "ag-waiting"}`, title: node.ready ? "has new events" : "waiting for an event", text: (node.ready ? "✓ " : "… ") + name });
  }
  const kind = node.all ? "all" : "any";
  const parts = (node.all || node.any).map(conditionNode);
  const joined = [];
  parts.forEach((p, i) => { if (i) joined.push(el("span", { class: "ag-op", text: kind === "all" ? " & " : " | " })); joined.push(p); });
  return el("span", { class: "ag-group" }, "(", ...joined, ")");
}

function drawConditions(list, conditions) {
  if (!conditions.length) {
    list.replaceChildren(el("li", { class: "muted", text: "No DAG is scheduled on assets." }));
    return;
  }
  list.replaceChildren(...conditions.map((c) => el("li", {},
    dagLink(c.dag_id), " ",
    el("span", { class: c.pending && c.pending.ready ? "ag-ready" : "muted", text: c.pending && c.pending.ready ? "ready: a run starts at the next scheduler loop" : "waits for: " }),
    c.pending ? conditionNode(c.pending) : "")));
}

function eventRows(events) {
  return events.map((e) => el("tr", {},
    el("td", { text: String(e.id) }),
    el("td", { class: "mono", text: e.asset.name }),
    el("td", {}, timeEl(e.timestamp, { ms: true })),
    el("td", {}, e.source_dag_id
      ? el("a", { href: `/dags/${encodeURIComponent(e.source_dag_id)}/runs/${encodeURIComponent(e.source_run_id)}`, text: `${e.source_dag_id}.${e.source_task_id}` })
      : el("span", { text: e.source + (e.source_aliases.length ? ` via ${e.source_aliases.join(", ")}` : "") })),
    el("td", { class: "mono small", text: JSON.stringify(e.extra) })));
}

function initAssets() {
  const data = pageData();
  drawGraph(document.getElementById("asset-graph"), data.graph);
  drawAssets(document.querySelector("#asset-table tbody"), data.assets);
  drawConditions(document.getElementById("asset-conditions"), data.conditions);
  document.querySelector("#asset-events tbody").replaceChildren(...eventRows(data.events));
  poll(async () => {
    const [assets, events, graph] = await Promise.all([api("/assets"), api("/assets/events?limit=50"), api("/assets/graph")]);
    drawGraph(document.getElementById("asset-graph"), graph);
    drawAssets(document.querySelector("#asset-table tbody"), assets.assets);
    document.querySelector("#asset-events tbody").replaceChildren(...eventRows(events.asset_events));
    return IDLE_MS;
  }, IDLE_MS);
}

async function initRunAssetEvents() {
  const box = document.getElementById("run-asset-events");
  const data = pageData();
  if (!box || !data || !data.run || data.run.run_type !== "asset_triggered") return;
  const run = data.run;
  const events = await api(`/dags/${encodeURIComponent(run.dag_id)}/dagRuns/${encodeURIComponent(run.dag_run_id)}/upstreamAssetEvents`);
  const table = el("table", { class: "table" },
    el("thead", {}, el("tr", {}, ...["#", "Asset", "Time", "Source", "Extra"].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...eventRows(events.asset_events)));
  box.replaceChildren(el("h2", { text: `Triggering asset events (${events.total_entries})` }), table);
  box.hidden = false;
}

if (document.body.dataset.page === "assets") initAssets();
if (document.body.dataset.page === "run") initRunAssetEvents();
