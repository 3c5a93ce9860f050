/* statewright web UI: the clear and mark dialogs. Each option change asks the API for the plan
   (a dry run) and lists every task instance that would change; Confirm applies the same body.
   Uses app.js's helpers (api, el, toast, tiPath, tiLabel), which are loaded on every page. */
"use strict";

(() => {
  const KINDS = {
    "clear-task": { title: (t) => `Clear ${t.label}`, defaults: ["include_downstream", "recursive"],
      words: "The task instances below run again; their results (XCom) are deleted." },
    "mark-task": { title: (t) => `Mark ${t.label} ${t.state}`, defaults: [],
      words: "A running try is killed; the run's state follows its leaves." },
    "clear-run": { title: (t) => `Clear run ${t.runId}`, defaults: ["recursive"],
      words: "The task instances below run again; a finished run goes back to queued." },
    "run-state": { title: (t) => t.label, defaults: [], words: "" },
  };
  const runPath = (t) => `/dags/${enc(t.dagId)}/dagRuns/${enc(t.runId)}`;

  let target = null;
  let seq = 0;

  function options() {
    const body = {};
    for (const label of document.querySelectorAll("#control-options .opt:not([hidden])")) {
      const input = label.querySelector("input");
      body[input.name] = input.checked;
    }
    return body;
  }

  function request(dryRun) {
    const t = target;
    const opts = options();
    const ti = t.taskId ? tiPath(t.dagId, t.runId, t.taskId, t.mapIndex) : null;
    if (t.kind === "clear-task") {
      return api(`${ti}/clear`, { method: "POST", body: { ...opts, dry_run: dryRun } });
    }
    if (t.kind === "clear-run") {
      return api(`${runPath(t)}/clear`, { method: "POST", body: { ...opts, dry_run: dryRun } });
    }
    if (t.kind === "mark-task") {
      const body = { ...opts, new_state: t.state };
      return api(dryRun ? `${ti}/dry_run` : ti, { method: "PATCH", body });
    }
    return api(runPath(t), { method: "PATCH", body: { state: t.state } });
  }

  function previewTable(plan) {
    // The run column only when the plan reaches several runs (past / future).
    const runs = new Set([...plan.changes.map((c) => c.dag_run_id || plan.dag_run_id),
      ...(plan.run_changes || []).map((r) => r.dag_run_id)]);
    const many = runs.size > 1;
    const runCell = (id) => (many ? el("td", { class: "mono" }, id || plan.dag_run_id) : null);
    const rows = plan.changes.map((c) => el("tr", { class: "change",
      dataset: { runId: c.dag_run_id || plan.dag_run_id, taskId: c.task_id, mapIndex: c.map_index } },
    runCell(c.dag_run_id),
    el("td", { class: "mono" }, tiLabel(c.task_id, c.map_index)),
    el("td", {}, el("i", { class: `sq s-${c.from_state}` }), ` ${c.from_state} → `,
      el("i", { class: `sq s-${c.to_state}` }), ` ${c.to_state}`),
    el("td", { class: "small" }, c.kills_try ? `its try ${c.try_number} is killed` : "")));
    for (const u of plan.unchanged || []) {
      rows.push(el("tr", { class: "unchanged" }, runCell(u.dag_run_id),
        el("td", { class: "mono" }, u.task_id), el("td", {}, "unchanged"),
        el("td", { class: "small" }, u.reason)));
    }
    for (const r of plan.run_changes || []) {
      rows.push(el("tr", { class: "run-change" }, runCell(r.dag_run_id),
        el("td", {}, many ? "the run" : `the run ${r.dag_run_id}`),
        el("td", {}, `${r.from_state} → ${r.to_state}`), el("td", { class: "small" }, r.message)));
    }
    return el("table", {}, el("thead", {}, el("tr", {}, many ? el("th", {}, "Run") : null,
      el("th", {}, "Task instance"), el("th", {}, "From → to"), el("th", {}, "Note"))),
    el("tbody", {}, rows));
  }

  async function refreshPreview() {
    const mine = ++seq;
    const box = $("#control-preview");
    const confirmBtn = $("#control-confirm");
    confirmBtn.disabled = true;
    $("#control-error").textContent = "";
    if (target.kind === "run-state") { $("#control-preview-box").hidden = true; confirmBtn.disabled = false; return; }
    $("#control-preview-box").hidden = false;
    box.replaceChildren(el("p", { class: "muted empty" }, "Working out what would change…"));
    let plan;
    try {
      plan = await request(true);
    } catch (e) {
      if (mine !== seq) return;
      box.replaceChildren();
      $("#control-error").textContent = e.message;
      return;
    }
    if (mine !== seq) return;
    const n = plan.changes.length;
    $("#control-count").textContent = `(${n} task instance${n === 1 ? "" : "s"})`;
    if (!n) {
      box.replaceChildren(el("p", { class: "muted empty" }, plan.notice || "Nothing would change."));
      return;
    }
    box.replaceChildren(previewTable(plan));
    confirmBtn.disabled = false;
  }

  async function apply(ev) {
    ev.preventDefault();
    const t = target;
    $("#control-confirm").disabled = true;
    try {
      const res = await request(false);
      $("#control-dialog").close();
      if (t.kind === "mark-task") toast(`${t.label} marked ${t.state}`);
      else if (t.kind === "run-state") toast(`Run ${t.runId}: ${res.state_name || res.state}`);
      else toast(res.notice || `${res.changes.length} task instance(s) cleared`);
      if (t.onDone) t.onDone(res);
    } catch (e) {
      $("#control-error").textContent = e.message;
      $("#control-confirm").disabled = false;
    }
  }

  /** Open the dialog. spec: { kind, dagId, runId, taskId?, mapIndex?, state?, label?, preset?,
      onDone? } (kind: clear-task, mark-task, clear-run, run-state). */
  function open(spec) {
    const kind = KINDS[spec.kind];
    target = { mapIndex: -1, ...spec };
    if (!target.label) target.label = target.taskId ? tiLabel(target.taskId, target.mapIndex) : target.runId;
    $("#control-title").textContent = kind.title(target);
    $("#control-target").textContent = target.taskId
      ? `DAG ${target.dagId} · run ${target.runId}` : `DAG ${target.dagId}`;
    $("#control-words").textContent = spec.words || kind.words;
    const checked = new Set([...kind.defaults, ...(spec.preset || [])]);
    for (const label of document.querySelectorAll("#control-options .opt")) {
      const input = label.querySelector("input");
      label.hidden = !label.dataset.for.split(" ").includes(spec.kind);
      input.checked = checked.has(input.name);
      input.onchange = refreshPreview;
    }
    $("#control-options").hidden = spec.kind === "run-state";
    $("#control-count").textContent = "";
    $("#control-form").onsubmit = apply;
    $("#control-cancel").onclick = () => $("#control-dialog").close();
    $("#control-dialog").showModal();
    refreshPreview();
  }

  window.statewrightControls = { open };
})();
