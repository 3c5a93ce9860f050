/* statewright web UI: draws each page from the JSON embedded in it, then keeps it live by
   polling the REST API (every 2 s while a run is unfinished). No framework, no build step. */
"use strict";

const API = "/api/v1";
const UNFINISHED_RUN = new Set(["queued", "running", "paused"]);
const FINISHED_TI = new Set(["success", "failed", "skipped", "upstream_failed", "removed"]);
const PEOPLE = new Set(["api", "user"]);
const isPerson = (actor) => PEOPLE.has(actor) || /^(user|cli):/.test(actor || "");
const LIVE_MS = 2000;
const IDLE_MS = 10000;

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

function pageData() {
  const node = $("#page-data");
  return node ? JSON.parse(node.textContent) : null;
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
  const res = await fetch(API + path, opts);
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
  dialog.showModal();
  $("#trigger-conf").focus();
  if (window.statewrightTemplating) window.statewrightTemplating.openTriggerForm(dagId);
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

// -- page: DAG list -------------------------------------------------------------------------

function renderDagRows(data) {
  const body = $("#dag-rows");
  if (!data.dags.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "muted" },
      "No DAGs match. DAG files go in the DAGs folder (STATEWRIGHT_DAGS_FOLDER); the DAG " +
      "processor picks them up within seconds.")));
    return;
  }
  body.replaceChildren(...data.dags.map((dag) => {
    const last = dag.last_run;
    return el("tr", { dataset: { dagId: dag.dag_id } },
      el("td", { class: "narrow" }, pauseSwitch(dag, (d) => {
        dag.is_paused = d.is_paused;
        refreshNow();
      })),
      el("td", {},
        el("a", { class: "dag-id", href: `/dags/${enc(dag.dag_id)}` }, dag.dag_display_name || dag.dag_id),
        dag.kind === "flow" ? el("span", { class: "pill", title: "A flow" }, " flow") : null,
        dag.description ? el("div", { class: "desc" }, dag.description) : null,
        dag.tags.length ? el("div", {}, ...dag.tags.map((t) =>
          el("a", { class: "chip", href: `/?tag=${enc(t)}` }, `#${t}`))) : null),
      el("td", { class: "mono small" }, dag.schedule || el("span", { class: "muted" }, "None")),
      el("td", {}, el("span", { class: "dots" }, ...dag.recent_runs.map((r) =>
        el("a", {
          class: `dot-run s-${r.state}`, href: runUrl(dag.dag_id, r.dag_run_id),
          title: `${r.dag_run_id}\n${r.state_name} (${r.state})`,
        })))),
      el("td", {}, last ? el("span", {}, badge(last.state, last.state_name), " ",
        el("span", { class: "muted small", title: last.run_after || "" }, ago(last.run_after)))
        : el("span", { class: "muted" }, "never run")),
      el("td", { class: "small" }, dag.next_dagrun ? timeEl(dag.next_dagrun) :
        el("span", { class: "muted" }, "—")),
      el("td", {}, el("button", {
        class: "btn", "data-trigger": dag.dag_id, title: `Trigger a run of ${dag.dag_id}`,
        onclick: () => openTrigger(dag.dag_id, dag.is_paused, () => refreshNow()),
      }, "▶ Trigger")));
  }));
}

let refreshNow = () => {};

function initDags() {
  let data = pageData();
  const query = JSON.parse($("#page-query").textContent);
  renderDagRows(data);
  const params = new URLSearchParams({ limit: query.limit, offset: query.offset });
  if (query.q) params.set("dag_id_pattern", query.q);
  if (query.tag) params.append("tags", query.tag);
  if (query.paused !== null) params.set("paused", query.paused);
  const live = () => data.dags.some((d) => d.recent_runs.some((r) => UNFINISHED_RUN.has(r.state)));
  const refresh = async () => {
    data = await api(`/dags?${params}`);
    renderDagRows(data);
    return live() ? LIVE_MS : IDLE_MS;
  };
  const poller = poll(refresh, live() ? LIVE_MS : IDLE_MS);
  refreshNow = () => poller.now();
  liveRefresh({}, poller);
}

// -- task instance panel -----------------------------------------------------------------------

function historyTable(transitions) {
  // Newest first: what happened last is what a person looks for.
  const rows = [...transitions].reverse().flatMap((t) => {
    const same = t.from_state === t.to_state;
    const change = t.from_state === null
      ? el("span", {}, el("span", { class: "muted" }, "created in "), el("i", { class: `sq s-${t.to_state}` }), " ", t.to_state)
      : same ? el("span", {}, el("i", { class: `sq s-${t.to_state}` }), " ", t.to_state,
        el("span", { class: "muted" }, " (no change)"))
        : el("span", {}, el("i", { class: `sq s-${t.from_state}` }), " ", t.from_state,
          el("span", { class: "arrow" }, " → "), el("i", { class: `sq s-${t.to_state}` }), " ",
          t.to_state);
    const main = el("tr", { class: "h-main" + (same ? " note" : "") },
      el("td", { class: "mono nowrap" }, timeEl(t.at, { ms: true, date: false })),
      el("td", { class: "nowrap" }, change),
      el("td", {}, el("b", { class: "h-name" }, t.name)),
      el("td", {}, el("span", { class: "actor" + (isPerson(t.actor) ? " person" : ""),
        title: isPerson(t.actor) ? "a person (CLI or API)" : "a component" }, t.actor)),
      el("td", { class: "muted" }, t.try_number === null ? "" : `try ${t.try_number}`));
    if (!t.message) return [main];
    main.classList.add("has-msg");
    return [main, el("tr", { class: "h-msg" }, el("td", {}),
      el("td", { colspan: 4, class: "history-message" }, t.message))];
  });
  return el("table", { class: "hist" },
    el("thead", {}, el("tr", {}, el("th", {}, "At"), el("th", {}, "From → to"),
      el("th", {}, "Name"), el("th", {}, "Actor"), el("th", {}, "Try"))),
    el("tbody", {}, rows));
}

/** The task's doc_md, as the server rendered and sanitized it (an allowlist of tags). */
function taskDoc(ti) {
  if (!ti.doc_md_html) return null;
  const body = el("div", { class: "doc-md task-doc-body" });
  body.innerHTML = ti.doc_md_html;  // sanitized by the server (nh3), no style attributes
  return el("details", { class: "task-doc", id: "panel-doc", open: true },
    el("summary", {}, "Task documentation"), body);
}

function fact(dt, dd) {
  return dd === null || dd === undefined || dd === "" || dd === false ? []
    : [el("dt", {}, dt), el("dd", {}, dd)];
}

class TaskPanel {
  constructor(container, { closable = true, onClose = null, onChange = null } = {}) {
    this.box = container;
    this.closable = closable;
    this.onClose = onClose;
    this.onChange = onChange;
    this.key = null;
    this.selectedTry = null;
    this.stopPoll = null;
    this.logCache = new Map();
  }

  open(dagId, runId, taskId, initial = null, mapIndex = -1) {
    if (this.stopPoll) this.stopPoll();
    this.key = { dagId, runId, taskId, mapIndex };
    this.selectedTry = null;
    this.snapshot = null;
    this.xcoms = [];
    this.taskState = [];
    this.logCache.clear();
    this.box.hidden = false;
    if (initial) this.render(initial.ti, initial.history);
    else this.box.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    const key = this.key;
    this.stopPoll = poll(async () => {
      if (this.key !== key) return 0;
      const [ti, history, xcoms, kept] = await Promise.all([
        api(tiPath(dagId, runId, taskId, mapIndex)),
        api(tiPath(dagId, runId, taskId, mapIndex) + "/history"),
        api(tiPath(dagId, runId, taskId, mapIndex) + "/xcomEntries"),
        api(tiPath(dagId, runId, taskId) + `/taskState?map_index=${mapIndex >= 0 ? mapIndex : -1}`),
      ]);
      if (this.key !== key) return 0;
      const snapshot = JSON.stringify([ti, history, xcoms, kept]);
      if (snapshot !== this.snapshot) {
        this.snapshot = snapshot;
        this.xcoms = xcoms.xcom_entries;
        this.taskState = kept.entries;
        this.render(ti, history);
      }
      return FINISHED_TI.has(ti.state) ? IDLE_MS * 3 : LIVE_MS;
    }, initial ? (FINISHED_TI.has(initial.ti.state) ? IDLE_MS * 3 : LIVE_MS) : 0);
  }

  close() {
    if (this.stopPoll) this.stopPoll();
    this.key = null;
    this.box.hidden = true;
    this.box.replaceChildren();
    if (this.onClose) this.onClose();
  }

  render(ti, history) {
    const { dagId, runId, taskId } = this.key;
    this.ti = ti;
    const tries = ti.tries;
    if (this.selectedTry === null && tries.length) this.selectedTry = tries[tries.length - 1].try_number;
    const head = el("div", { class: "panel-head" },
      el("div", {},
        el("h2", { id: "panel-task-id" }, tiLabel(ti.task_id, ti.map_index)),
        ti.rendered_map_index ? el("div", { class: "muted small", id: "panel-map-name" },
          ti.rendered_map_index) : null,
        el("div", { class: "muted small" }, "run ",
          el("a", { href: runUrl(dagId, runId) }, runId), " · ",
          el("a", { href: `${runUrl(dagId, runId)}/tasks/${enc(taskId)}` +
            (ti.map_index >= 0 ? `?map_index=${ti.map_index}` : "") }, "page"))),
      this.closable ? el("button", { class: "close", title: "Close", "aria-label": "Close",
        onclick: () => this.close() }, "✕") : null);
    const stateLine = el("div", { class: "panel-state" },
      el("span", { id: "panel-state" }, badge(ti.state, ti.state_name)), " ",
      el("span", { class: "muted" }, `try ${ti.try_number} of ${ti.max_tries + 1}`),
      ti.duration !== null ? el("span", { class: "muted" }, ` · ${dur(ti.duration)}`) : null);
    const message = ti.state_message ? el("div", { class: `message s-${ti.state}`,
      id: "panel-message" }, ti.state_message) : null;
    const facts = el("dl", { class: "facts" },
      ...fact("Operator", ti.operator_name && ti.operator_name !== ti.operator
        ? el("span", { id: "panel-operator", title: `class ${ti.operator}` }, ti.operator_name)
        : el("span", { id: "panel-operator" }, ti.operator)),
      ...fact("Scheduled", ti.scheduled_at && timeEl(ti.scheduled_at)),
      ...fact("Queued", ti.queued_at && timeEl(ti.queued_at)),
      ...fact("Started", ti.start_date && timeEl(ti.start_date)),
      ...fact("Ended", ti.end_date && timeEl(ti.end_date)),
      ...fact("Heartbeat", ti.state === "running" && ti.last_heartbeat_at
        ? el("span", {}, timeEl(ti.last_heartbeat_at), ` (${ago(ti.last_heartbeat_at)})`) : null),
      ...fact("Next retry", ti.state === "up_for_retry" && ti.next_retry_at && el("span", {}, timeEl(ti.next_retry_at),
        ` (${ago(ti.next_retry_at)})`)),
      ...fact("Reschedule at", ti.state === "up_for_reschedule" && ti.reschedule_date && timeEl(ti.reschedule_date)),
      ...triggerFacts(ti),
      ...fact("Input", ti.state === "awaiting_input" ? el("a", { href: `/required-actions?dag_id=${enc(ti.dag_id)}&run_id=${enc(ti.dag_run_id)}&task_id=${enc(ti.task_id)}&map_index=${ti.map_index}`,
        id: "panel-respond" }, "Respond on the Required actions page") : null),
      ...fact("Host", ti.hostname ? `${ti.hostname}${ti.pid ? ` (pid ${ti.pid})` : ""}` : null),
      ...fact("Pool / queue", `${ti.pool} / ${ti.queue}`));
    const actions = el("div", { class: "panel-actions" },
      el("button", { class: "btn small", onclick: () => this.act("clear") }, "↻ Clear"),
      el("button", { class: "btn small", disabled: ti.state === "success",
        onclick: () => this.act("success") }, "Mark success"),
      el("button", { class: "btn small danger", disabled: ti.state === "failed",
        onclick: () => this.act("failed") }, "Mark failed"));
    const triesBox = el("div", { id: "panel-tries" });
    if (tries.length) {
      triesBox.append(el("h3", {}, "Tries"), el("div", { class: "tabs" }, ...tries.map((t) =>
        el("button", { class: "tab" + (t.try_number === this.selectedTry ? " on" : ""),
          title: `${t.state_name} (${t.state})`,
          onclick: () => { this.selectedTry = t.try_number; this.render(this.ti, this.history); } },
          el("i", { class: `sq s-${t.state}` }), `Try ${t.try_number}: ${t.state_name}`))));
      const t = tries.find((x) => x.try_number === this.selectedTry) || tries[tries.length - 1];
      triesBox.append(this.tryDetail(t));
    } else {
      triesBox.append(el("p", { class: "muted small" }, "No try has started yet."));
    }
    this.history = history;
    const xcomBox = this.xcoms && this.xcoms.length ? el("div", { id: "panel-xcoms" },
      el("h3", {}, "XCom"),
      el("table", { class: "xcoms" }, el("tbody", {}, ...this.xcoms.map((x) => el("tr",
        { dataset: { key: x.key } }, el("th", { class: "mono" }, x.key),
        el("td", {}, xcomValue(x))))))) : null;
    // the task-instance page lists the task state itself (#task-state); the side panel here
    const stateBox = this.taskState && this.taskState.length && !$("#task-state") ?
      el("div", { id: "panel-task-state" }, el("h3", {}, "Task state"),
        el("table", { class: "xcoms" }, el("tbody", {}, ...this.taskState.map((x) => el("tr",
          { dataset: { key: x.key } }, el("th", { class: "mono" }, x.key),
          el("td", {}, el("code", {}, JSON.stringify(x.value))),
          el("td", { class: "muted small" }, `${x.retention}, try ${x.try_number}`)))))) : null;
    this.box.replaceChildren(...[head, stateLine, message, facts, taskDoc(ti), actions, xcomBox,
      stateBox,
      triesBox,
      el("h3", {}, "State history"), historyTable(history.transitions)].filter(Boolean));
  }

  tryDetail(t) {
    const box = el("div", { class: "try" },
      el("dl", { class: "facts" },
        ...fact("State", badge(t.state, t.state_name)),
        ...fact("Started", t.start_date && timeEl(t.start_date)),
        ...fact("Ended", t.end_date && timeEl(t.end_date)),
        ...fact("Duration", t.duration !== null ? dur(t.duration) : null),
        ...fact("Host", t.hostname ? `${t.hostname}${t.pid ? ` (pid ${t.pid})` : ""}` : null),
        ...fact("Message", t.state_message),
        ...fact("Error", t.error && t.error !== t.state_message ? t.error : null)));
    if (t.traceback) box.append(el("details", {}, el("summary", {}, "Traceback"),
      el("pre", { class: "trace" }, t.traceback)));
    const logBox = el("div", { class: "log-box" }, el("h3", {}, `Log of try ${t.try_number}`));
    const pre = el("pre", { class: "log", id: "panel-log" }, "Loading…");
    logBox.append(pre);
    box.append(window.statewrightTemplating
      ? window.statewrightTemplating.tryTabs(logBox, this.key, t.try_number) : logBox);
    this.loadLog(t, pre);
    return box;
  }

  async loadLog(t, pre) {
    const { dagId, runId, taskId, mapIndex } = this.key;
    const cacheKey = t.try_number;
    const cached = this.logCache.get(cacheKey);
    if (cached && !t.current) { pre.textContent = cached; return; }
    try {
      const log = await api(`${tiPath(dagId, runId, taskId, mapIndex)}/logs/${t.try_number}`);
      const text = (log.truncated ? `… (only the last part of ${log.size} bytes)\n` : "") +
        (log.content || "(empty)");
      this.logCache.set(cacheKey, text);
      pre.textContent = text;
      if (t.current) pre.scrollTop = pre.scrollHeight;
    } catch (e) {
      pre.textContent = e.message;
      pre.className = "log missing";
    }
  }

  act(what) {
    const { dagId, runId, taskId, mapIndex } = this.key;
    window.statewrightControls.open({
      kind: what === "clear" ? "clear-task" : "mark-task", dagId, runId, taskId, mapIndex,
      state: what === "clear" ? null : what,
      onDone: () => {
        this.open(dagId, runId, taskId, null, mapIndex);
        if (this.onChange) this.onChange();
      },
    });
  }
}

// -- page: DAG (grid) ------------------------------------------------------------------------

function cellTitle(row, run, c) {
  let t = `${row.task_id} · ${run.dag_run_id}\n${c.state_name} (${c.state}) · try ${c.try_number}`;
  if (c.duration !== null && c.duration !== undefined) t += ` · ${dur(c.duration)}`;
  if (c.state_message) t += `\n${c.state_message}`;
  return t;
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
  const body = grid.rows.flatMap((row) => [el("tr", {},
    el("th", { class: "task" + (row.in_dag ? "" : " gone"), title: row.in_dag
      ? `${row.task_id} (${row.operator_name || row.operator || "task"}${row.role ? `, ${row.role} task` : ""})`
      : `${row.task_id}: no longer in the DAG`, dataset: { taskId: row.task_id } },
    row.is_mapped && mapping ? mapping.toggle(dagId, row, runs) : null,
    row.task_id, row.role ? el("span", { class: `role role-${row.role}` }, row.role) : null,
    !row.in_dag && row.version_number ? el("span", { class: "gone-version",
      title: `in the DAG up to version ${row.version_number}` }, `v${row.version_number}`) : null),
    ...row.instances.map((c, i) => {
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
    })), ...(row.is_mapped && mapping ? mapping.subRows(dagId, row, runs, selected, onSelect) : [])]);
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

// -- page: run -------------------------------------------------------------------------------

function segmentsOf(transitions, endOf) {
  // One bar per state the entity was in: from each transition to the next (or to the end).
  const segs = [];
  transitions.forEach((t, i) => {
    const start = new Date(t.at).getTime();
    const next = transitions[i + 1];
    const end = next ? new Date(next.at).getTime() : endOf(t);
    if (end !== null) segs.push({ start, end, t });
  });
  return segs;
}

function renderGantt(run, transitions, order, onPick) {
  const box = $("#gantt");
  if (!transitions.length) { box.replaceChildren(el("p", { class: "muted" }, "No history.")); return; }
  const finished = !UNFINISHED_RUN.has(run.state);
  const times = transitions.map((t) => new Date(t.at).getTime());
  const t0 = Math.min(...times);
  const t1 = Math.max(...times, finished ? 0 : Date.now());
  const span = Math.max(t1 - t0, 1);
  const lanes = new Map([["", []]]);
  for (const id of order) lanes.set(id, []);
  for (const t of transitions) {
    const key = t.task_id ? tiLabel(t.task_id, t.map_index ?? -1) : "";
    if (!lanes.has(key)) lanes.set(key, []);
    lanes.get(key).push(t);
  }
  const endOf = (t) => {
    if (t.task_id === null) return UNFINISHED_RUN.has(t.to_state) ? t1 : null;
    return FINISHED_TI.has(t.to_state) ? null : t1;
  };
  const rows = [];
  for (const [key, list] of lanes) {
    const track = el("div", { class: "g-track" });
    const last = list[list.length - 1];
    if (last && endOf(last) === null) {  // the final state: a mark where it was reached
      track.append(el("span", {
        class: `g-end s-${last.to_state}`, style: `left:${(100 * (new Date(last.at) - t0)) / span}%`,
        title: `${key || "run"}: ${last.name} (${last.to_state}) by ${last.actor}\n` +
          fmtTime(last.at, { ms: true }) + (last.message ? `\n${last.message}` : ""),
      }));
    }
    for (const s of segmentsOf(list, endOf)) {
      const left = (100 * (s.start - t0)) / span;
      const width = Math.max((100 * (s.end - s.start)) / span, 0.15);
      track.append(el("span", {
        class: `g-seg s-${s.t.to_state}`, style: `left:${left}%;width:${width}%`,
        title: `${key || "run"}: ${s.t.name} (${s.t.to_state}) by ${s.t.actor}\n` +
          `${fmtTime(s.t.at, { ms: true })} · ${dur((s.end - s.start) / 1000)}` +
          (s.t.message ? `\n${s.t.message}` : ""),
      }));
    }
    rows.push(el("div", { class: "g-row" },
      el("div", { class: "g-label", title: key || "the run", onclick: key ? () => onPick(key) : null },
        key || el("b", {}, "run")), track));
  }
  box.replaceChildren(...rows, el("div", { class: "g-axis" },
    el("span", {}, fmtTime(new Date(t0).toISOString(), { date: false })),
    el("span", {}, `+${dur(span / 1000 / 2)}`),
    el("span", {}, `+${dur(span / 1000)}`)));
}

function renderRun(run, tis, history, selectedTask, onPick, onAction) {
  $("#run-state").replaceChildren(badge(run.state, run.state_name));
  $("#run-message").textContent = run.state_message || "";
  $("#run-facts").replaceChildren(
    ...fact("Type", run.run_type), ...fact("Triggered by", run.triggered_by),
    ...fact("Logical date", timeEl(run.logical_date)), ...fact("Queued", timeEl(run.queued_at)),
    ...fact("Started", timeEl(run.start_date)), ...fact("Ended", timeEl(run.end_date)),
    ...fact("Duration", dur(runDuration(run)) || "—"), ...fact("Cleared", `${run.clear_number}×`),
    ...fact("Conf", run.read_error ? el("span", { class: "warn" }, run.read_error)
      : el("code", { class: "mono small" }, JSON.stringify(run.conf))));
  const st = run.state;
  const buttons = [];
  if (st === "running" || st === "queued") buttons.push(["Pause", "paused", ""]);
  if (st === "paused") buttons.push(["Resume", "running", ""]);
  if (st === "failed" && run.state_name === "Crashed") buttons.push(["↻ Resume", "resume-crashed", ""]);
  if (UNFINISHED_RUN.has(st)) buttons.push(["Cancel", "cancelled", "danger"]);
  if (!UNFINISHED_RUN.has(st)) buttons.push(["↻ Clear failed", "clear-failed", ""], ["↻ Clear all", "clear", ""]);
  if (st !== "success") buttons.push(["Mark success", "success", ""]);
  if (st !== "failed") buttons.push(["Mark failed", "failed", "danger"]);
  $("#run-actions").replaceChildren(...buttons.map(([label, what, cls]) =>
    el("button", { class: `btn ${cls}`, onclick: () => onAction(what, label) }, label)));
  $("#tis tbody").replaceChildren(...tis.task_instances.map((t) => el("tr", {
    class: tiLabel(t.task_id, t.map_index) === selectedTask ? "selected" : "",
    dataset: { taskId: t.task_id, mapIndex: t.map_index },
    onclick: () => onPick(t.task_id, t.map_index),
  },
  el("td", { class: "mono", title: t.rendered_map_index || "" }, tiLabel(t.task_id, t.map_index) +
    (t.rendered_map_index ? ` ${t.rendered_map_index}` : "")),
  el("td", {}, badge(t.state, t.state_name)),
  el("td", {}, t.try_number ? `${t.try_number} / ${t.max_tries + 1}` : "—"),
  el("td", { class: "small" }, timeEl(t.start_date)),
  el("td", {}, dur(t.duration ?? (t.state === "running" && t.start_date
    ? (Date.now() - new Date(t.start_date)) / 1000 : null))),
  el("td", { class: "msg", title: t.state_message || "" }, t.state_message || ""))));
  const labels = new Map(tis.task_instances.map((t) => [tiLabel(t.task_id, t.map_index), t]));
  renderGantt(run, history.transitions, [...labels.keys()], (label) => {
    const t = labels.get(label);
    onPick(t ? t.task_id : label, t ? t.map_index : -1);
  });
}

/** The run page's chosen task instance in its URL (?task_id=...&map_index=...). */
function setTaskInUrl(taskId, mapIndex) {
  const p = new URLSearchParams(location.search);
  p.delete("task_id");
  p.delete("map_index");
  if (taskId) p.set("task_id", taskId);
  if (taskId && mapIndex >= 0) p.set("map_index", mapIndex);
  const qs = p.toString();
  history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
}

function initRun() {
  let { run, task_instances: tis, history } = pageData();
  const dagId = run.dag_id;
  const runId = run.dag_run_id;
  let selectedTask = null;
  let poller = null;
  const refreshNow = () => { if (poller) poller.now(); };
  const panel = new TaskPanel($("#panel"), {
    onClose: () => { selectedTask = null; draw(); setTaskInUrl(null, -1); },
    onChange: refreshNow,
  });
  const pick = (taskId, mapIndex = -1) => {
    selectedTask = tiLabel(taskId, mapIndex);
    draw();
    panel.open(dagId, runId, taskId, null, mapIndex);
    setTaskInUrl(taskId, mapIndex);
  };
  const RUN_WORDS = {
    paused: "No new task starts; running tries finish. Resume continues the run.",
    running: "The run continues: its waiting task instances start again.",
    cancelled: "Running tries are killed; every other unfinished task instance is skipped. " +
      "No failure callbacks run.",
    success: "Every task instance that has not succeeded becomes success (running tries are " +
      "killed).",
    failed: "Running task instances become failed (their tries are killed), the other " +
      "unfinished ones skipped.",
  };
  const act = (what, label) => {
    const controls = window.statewrightControls;
    if (what === "resume-crashed") {
      resumeCrashedRun(dagId, runId, refreshNow);
    } else if (what === "clear" || what === "clear-failed") {
      controls.open({ kind: "clear-run", dagId, runId, onDone: refreshNow,
        preset: what === "clear-failed" ? ["only_failed"] : [] });
    } else {
      controls.open({ kind: "run-state", dagId, runId, state: what, onDone: refreshNow,
        label: `${label.replace(/^↻ /, "")}: run ${runId}`, words: RUN_WORDS[what] });
    }
  };
  const draw = () => renderRun(run, tis, history, selectedTask, pick, act);
  const refresh = async () => {
    const base = `/dags/${enc(dagId)}/dagRuns/${enc(runId)}`;
    [run, tis, history] = await Promise.all([api(base), api(`${base}/taskInstances`),
      api(`${base}/history`)]);
    // redrawn every time while the run goes on: running bars grow with the clock
    draw();
    return UNFINISHED_RUN.has(run.state) ? LIVE_MS : IDLE_MS * 3;
  };
  draw();
  const asked = new URLSearchParams(location.search);
  if (asked.get("task_id")) pick(asked.get("task_id"), Number(asked.get("map_index") ?? -1));
  poller = poll(refresh, UNFINISHED_RUN.has(run.state) ? LIVE_MS : IDLE_MS * 3);
  liveRefresh({ dag_id: dagId, dag_run_id: runId }, poller, () => panel.stopPoll);
}

// -- page: task instance -------------------------------------------------------------------------

function initTaskInstance() {
  const { ti, history } = pageData();
  const panel = new TaskPanel($("#panel"), { closable: false });
  panel.open(ti.dag_id, ti.dag_run_id, ti.task_id, { ti, history }, ti.map_index);
  liveRefresh({ dag_id: ti.dag_id, dag_run_id: ti.dag_run_id }, () => panel.stopPoll);
}

// -- start ----------------------------------------------------------------------------------------

const PAGES = { dags: initDags, dag: initDag, run: initRun, task_instance: initTaskInstance };
const init = PAGES[document.body.dataset.page];
if (init) init();
refreshHealth();
setInterval(() => { if (!document.hidden) refreshHealth(); }, 15000);

// An XCom value as the API renders it: a DataFrame or Series as a small table, anything else
// as its JSON; the value's type (decimal.Decimal, ...) beside it, the stored form in a title.
function xcomValue(x) {
  const label = x.type ? el("span", { class: "muted small xcom-type" }, ` ${x.type}`) : null;
  const v = x.value;
  if (v && typeof v === "object" && Array.isArray(v.columns) && Array.isArray(v.rows)) {
    const more = v.total_rows > v.rows.length ?
      el("p", { class: "muted small" }, `${v.rows.length} of ${v.total_rows} rows`) : null;
    return el("div", { class: "xcom-table" }, el("table", { class: "xcoms" },
      el("thead", {}, el("tr", {}, ...v.columns.map((c) => el("th", {}, String(c))))),
      el("tbody", {}, ...v.rows.map((r) => el("tr", {},
        ...r.map((c) => el("td", { class: "mono" }, JSON.stringify(c))))))), more, label);
  }
  return el("span", { title: x.type ? JSON.stringify(x.raw) : "" },
    el("code", {}, JSON.stringify(v)), label);
}
