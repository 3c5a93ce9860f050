/* statewright web UI: draws each page from the JSON embedded in it, then keeps it live by
   polling the REST API (every 2 s while a run is unfinished). No framework, no build step.
   This file: the helpers every view uses (elements, API calls, times, polling, toasts), the
   health in the top bar and the trigger dialog. One file per view follows (dags_page.js,
   grid_page.js, run_page.js, task_panel.js); start.js draws the page. */
"use strict";

const API = "/api/v1";
const UNFINISHED_RUN = new Set(["queued", "running", "paused"]);
const FINISHED_TI = new Set(["success", "failed", "skipped", "upstream_failed", "removed"]);
const PEOPLE = new Set(["api", "user"]);
const isPerson = (actor) => PEOPLE.has(actor) || /^(user|cli):/.test(actor || "");
/* How often a page polls: every 2 s while a run is unfinished, every 10 s otherwise. A script
   that runs before this one may set window.statewrightPollMs = { live, idle } (milliseconds):
   the browser tests lengthen both, so that what a live event or an action drew cannot have
   come from a poll. */
const POLL_MS = { live: 2000, idle: 10000, ...window.statewrightPollMs };
const LIVE_MS = POLL_MS.live;
const IDLE_MS = POLL_MS.idle;

// -- small helpers ------------------------------------------------------------------------

const $ = (sel, root = document) => root.querySelector(sel);
const enc = encodeURIComponent;

/** Styles through the CSSOM (allowed by the page's CSP, unlike a style attribute): an object of
    properties, or "name:value;..." text. */
function setStyle(node, value) {
  const pairs = typeof value === "string"
    ? value.split(";").filter((d) => d.includes(":"))
      .map((d) => [d.slice(0, d.indexOf(":")).trim(), d.slice(d.indexOf(":") + 1).trim()])
    : Object.entries(value);
  for (const [name, v] of pairs) node.style.setProperty(name, String(v));
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style") setStyle(node, value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

class ApiError extends Error {
  constructor(status, detail, body) { super(detail); this.status = status; this.body = body; }
}

async function api(path, { method = "GET", body } = {}) {
  const opts = { method, headers: { Accept: "application/json" } };
  const csrf = $('meta[name="csrf-token"]');
  if (csrf && csrf.content && method !== "GET") opts.headers["X-CSRF-Token"] = csrf.content;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path.startsWith("/api/") ? path : API + path, opts);  // "/api/v2/…" whole
  let data = null;
  try { data = await res.json(); } catch (_) { data = null; }
  if (res.status === 401) location.assign("/login?next=" + enc(location.pathname + location.search));
  if (!res.ok) throw new ApiError(res.status, (data && data.detail) || `HTTP ${res.status}`, data);
  return data;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");

function fmtTime(iso, { ms = false, date = true } = {}) {
  if (!iso) return "";
  const d = new Date(iso);
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  let t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (ms) t += "." + pad(d.getMilliseconds(), 3);
  return date ? `${day} ${t}` : t;
}

function timeEl(iso, opts) {
  if (!iso) return el("span", { class: "muted", text: "—" });
  return el("time", { datetime: iso, title: iso.replace("T", " ") + " (UTC)" }, fmtTime(iso, opts));
}

function ago(iso) {
  if (!iso) return "";
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  let v;
  if (a < 60) v = `${a}s`;
  else if (a < 3600) v = `${Math.floor(a / 60)} min`;
  else if (a < 86400) v = `${Math.floor(a / 3600)} h`;
  else v = `${Math.floor(a / 86400)} d`;
  return future ? `in ${v}` : `${v} ago`;
}

function dur(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const s = Number(seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad(Math.floor(s % 60))}s`;
  return `${Math.floor(m / 60)}h ${pad(m % 60)}m`;
}

function runDuration(run) {
  if (run.duration !== null && run.duration !== undefined) return run.duration;
  if (!run.start_date) return null;
  const end = run.end_date ? new Date(run.end_date) : new Date();
  return Math.max(0, (end - new Date(run.start_date)) / 1000);
}

function badge(state, name, { showType = true } = {}) {
  const label = name || state;
  const b = el("span", { class: `badge s-${state}`, title: `${label} (state type: ${state})` },
    label);
  if (showType && name && name.toLowerCase().replace(/_/g, "") !== state.replace(/_/g, "")) {
    b.append(el("span", { class: "type", text: state }));
  }
  return b;
}

let toastTimer = null;
function toast(message, { error = false, link = null } = {}) {
  const t = $("#toast");
  t.replaceChildren(message);
  if (link) t.append(" ", el("a", { href: link.href, text: link.text }));
  t.className = "toast show" + (error ? " error" : "");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.className = "toast"; }, error ? 9000 : 5000);
}

/** Call fn after firstDelay and then again after each delay it returns (ms; 0 stops),
    skipping while the tab is hidden. Returns a function that stops it; its ``now()`` calls fn
    at once and restarts the timer from there (after an action or a live event). */
function poll(fn, firstDelay) {
  let stopped = false;
  let timer = null;
  let running = false;
  let again = false;
  const tick = async () => {
    if (stopped) return;
    if (running) { again = true; return; }
    running = true;
    clearTimeout(timer);
    let next = IDLE_MS;
    if (document.hidden) next = LIVE_MS;
    else {
      try { next = await fn(); } catch (e) { next = IDLE_MS; }
    }
    running = false;
    if (!stopped && next) timer = setTimeout(tick, again ? 0 : next);
    again = false;
  };
  timer = setTimeout(tick, firstDelay);
  const stop = () => { stopped = true; clearTimeout(timer); };
  stop.now = () => { if (!stopped) { clearTimeout(timer); tick(); } };
  return stop;
}

/** Poke ``poller`` (a poll()) on every state change the live stream reports for ``query``. */
function liveRefresh(query, ...pollers) {
  if (!window.statewrightLive) return () => {};
  return window.statewrightLive.watch(query, () => {
    for (const p of pollers) {
      const target = typeof p === "function" && !p.now ? p() : p;
      if (target && target.now) target.now();
    }
  });
}

/** Calls `fn(width)` when `box`'s width changes (the window resized, a panel opened or closed
    beside it), at most once a frame: a chart drawn at a width in pixels follows its box. */
function onWidthChange(box, fn) {
  let width = box.clientWidth;
  let frame = null;
  new ResizeObserver(() => {
    if (frame !== null) return;
    frame = requestAnimationFrame(() => {
      frame = null;
      if (box.clientWidth !== width) {
        width = box.clientWidth;
        fn(width);
      }
    });
  }).observe(box);
}

/** A uPlot chart drawn in `box` keeps its height and takes the box's width when that changes
    (at least 320 px; not while the box is hidden). `chart()` gives the chart drawn last. */
function fitChartToBox(box, chart) {
  onWidthChange(box, (width) => {
    const c = chart();
    if (c && width > 0) c.setSize({ width: Math.max(320, width), height: c.height });
  });
}

const runUrl = (dagId, runId) => `/dags/${enc(dagId)}/runs/${enc(runId)}`;
const tiPath = (dagId, runId, taskId, mapIndex = -1) =>
  `/dags/${enc(dagId)}/dagRuns/${enc(runId)}/taskInstances/${enc(taskId)}` +
  (mapIndex >= 0 ? `/${mapIndex}` : "");
const tiLabel = (taskId, mapIndex) => (mapIndex >= 0 ? `${taskId} [${mapIndex}]` : taskId);

// -- health -------------------------------------------------------------------------------

async function refreshHealth() {
  const box = $("#health");
  if (!box) return;
  let h;
  try {
    const res = await fetch(API + "/health");
    h = await res.json();
  } catch (_) {
    box.replaceChildren(el("span", { class: "bad" }, el("i", { class: "dot" }), "API unreachable"));
    return;
  }
  const parts = [["database", h.metadatabase]];
  for (const [kind, info] of Object.entries(h.jobs || {})) parts.push([kind, info]);
  box.replaceChildren(...parts.map(([label, info]) => el("span", {
    class: info.status === "healthy" ? "ok" : "bad",
    title: info.latest_heartbeat ? `${label}: latest heartbeat ${fmtTime(info.latest_heartbeat)}`
      : `${label}: ${info.status}`,
  }, el("i", { class: "dot" }), label)));
}

// -- trigger dialog (DAG list and DAG page) --------------------------------------------------

function openTrigger(dagId, isPaused, onDone) {
  const dialog = $("#trigger-dialog");
  $("#trigger-dag").textContent = dagId;
  $("#trigger-paused-note").hidden = !isPaused;
  $("#trigger-error").textContent = "";
  const form = $("#trigger-form");
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const err = $("#trigger-error");
    err.textContent = "";
    const body = {};
    const runId = $("#trigger-run-id").value.trim();
    if (runId) body.dag_run_id = runId;
    const logical = logicalDate();
    if (logical === undefined) {
      err.textContent = "The logical date is not a valid date and time: pick one, or leave " +
        "it empty for now.";
      return;
    }
    if (logical) body.logical_date = logical;
    const params = window.statewrightTemplating;
    if (params && !params.checkTriggerForm()) {
      err.textContent = "Some params are not valid: see the messages above.";
      return;
    }
    const confText = $("#trigger-conf").value.trim();
    if (confText) {
      let conf;
      try { conf = JSON.parse(confText); } catch (e) {
        err.textContent = `Conf is not valid JSON: ${e.message}`;
        return;
      }
      if (conf === null || typeof conf !== "object" || Array.isArray(conf)) {
        err.textContent = "Conf must be a JSON object, e.g. {\"key\": 1}.";
        return;
      }
      body.conf = conf;
    }
    $("#trigger-submit").disabled = true;
    try {
      const run = await api(`/dags/${enc(dagId)}/dagRuns`, { method: "POST", body });
      dialog.close();
      $("#trigger-run-id").value = "";
      toast(`Run ${run.dag_run_id} of ${dagId} created (${run.state_name}).`,
        { link: { href: runUrl(dagId, run.dag_run_id), text: "Open run" } });
      if (onDone) onDone(run);
    } catch (e) {
      err.textContent = e.message;
      if (params) params.showTriggerErrors(e.body);
    } finally {
      $("#trigger-submit").disabled = false;
    }
  };
  $("#trigger-cancel").onclick = () => dialog.close();
  const now = new Date();
  $("#trigger-logical-date").value = localInputValue(now);
  const offset = -now.getTimezoneOffset();
  $("#trigger-logical-zone").textContent = `(your time zone, UTC${offset < 0 ? "−" : "+"}` +
    `${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)})`;
  dialog.showModal();
  $("#trigger-conf").focus();
  if (window.statewrightTemplating) window.statewrightTemplating.openTriggerForm(dagId);
}

/** A date as a datetime-local input's value (local time, to the second). */
function localInputValue(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The trigger form's logical date as UTC ISO text; null when empty, undefined when invalid. */
function logicalDate() {
  const input = $("#trigger-logical-date");
  if (!input.value) return input.validity.badInput ? undefined : null;
  const d = new Date(input.value);  // a datetime-local value is read as local time
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

async function setPaused(dagId, paused) {
  return api(`/dags/${enc(dagId)}`, { method: "PATCH", body: { is_paused: paused } });
}

function pauseSwitch(dag, onChange) {
  const input = el("input", { type: "checkbox", "aria-label": `${dag.dag_id} active` });
  input.checked = !dag.is_paused;
  input.addEventListener("change", async () => {
    const paused = !input.checked;
    try {
      const updated = await setPaused(dag.dag_id, paused);
      toast(`${dag.dag_id} ${updated.is_paused ? "paused" : "unpaused"}`);
      if (onChange) onChange(updated);
    } catch (e) {
      input.checked = !input.checked;
      toast(e.message, { error: true });
    }
  });
  return el("label", { class: "switch", title: "Unpaused DAGs get their runs started" },
    input, el("span", { class: "slider" }));
}
