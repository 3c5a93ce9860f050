/* statewright web UI: the run page (facts, actions, task instances, the timeline) and the
   task-instance page. Uses app.js's helpers and task_panel.js. */
"use strict";

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
    showRunLog(dagId, runId);
    return UNFINISHED_RUN.has(run.state) ? LIVE_MS : IDLE_MS * 3;
  };
  draw();
  showRunLog(dagId, runId);
  const asked = new URLSearchParams(location.search);
  if (asked.get("task_id")) pick(asked.get("task_id"), Number(asked.get("map_index") ?? -1));
  poller = poll(refresh, UNFINISHED_RUN.has(run.state) ? LIVE_MS : IDLE_MS * 3);
  liveRefresh({ dag_id: dagId, dag_run_id: runId }, poller, () => panel.stopPoll);
}

/** A flow run's own log (its start, prints in its body, its final state), when it has one
    (a DAG run's logs are its tries'). */
async function showRunLog(dagId, runId) {
  const box = $("#run-log");
  if (!box) return;
  let log;
  try {
    log = await api(`/dags/${enc(dagId)}/dagRuns/${enc(runId)}/log`);
  } catch (err) {
    box.hidden = false;
    box.replaceChildren(el("p", { class: "warn" }, err.message));
    return;
  }
  if (!log.path) return;
  box.hidden = false;
  box.replaceChildren(el("h2", {}, "Run log"),
    el("pre", { class: "log" }, (log.truncated ? "… (the start is cut off)\n" : "") + log.content));
}

// -- page: task instance -------------------------------------------------------------------------

function initTaskInstance() {
  const { ti, history } = pageData();
  const panel = new TaskPanel($("#panel"), { closable: false });
  panel.open(ti.dag_id, ti.dag_run_id, ti.task_id, { ti, history }, ti.map_index);
  liveRefresh({ dag_id: ti.dag_id, dag_run_id: ti.dag_run_id }, () => panel.stopPoll);
}
