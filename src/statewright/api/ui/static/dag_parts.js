/* statewright web UI: small parts of the DAG page and the task-instance panel (run type marks
   and dates on the grid's columns, a deferred task's trigger). Loaded before app.js; they call
   app.js's helpers (el, fact, timeEl, ago, pad) only when a page is drawn. */
"use strict";

const RUN_TYPES = {
  manual: ["M", "manual run: triggered by a person (UI, API or CLI)"],
  scheduled: ["S", "scheduled run: created by the scheduler from the schedule"],
  backfill: ["B", "backfill run"],
  asset_triggered: ["A", "asset-triggered run: created when its assets were updated"],
  flow: ["F", "flow run: a run of a flow (statewright.flows), called, served or triggered"],
};

/** The run's type as a small letter above its bar (Airflow marks it with an icon). */
function runTypeMark(runType) {
  const [letter, words] = RUN_TYPES[runType] || ["?", `${runType} run`];
  return el("span", { class: `rt rt-${runType}`, title: words, "aria-label": words }, letter);
}

/** "11-24 17:20" in the browser's time (the column's full date is in its title). */
function shortDate(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A deferred task instance's trigger: its class, what it waits for, until when. */
function triggerFacts(ti) {
  if (ti.state !== "deferred" || ti.trigger_id === null) return [];
  const t = ti.trigger;
  if (!t) return fact("Trigger", `#${ti.trigger_id}`);
  return [
    ...fact("Trigger", el("span", { id: "panel-trigger", title: t.classpath },
      `${t.classname} #${t.trigger_id}`,
      el("span", { class: "muted" }, t.triggerer_id !== null ? ` on triggerer ${t.triggerer_id}`
        : " (waiting for a triggerer)"))),
    ...fact("Waits for", el("span", { id: "panel-waits-for" }, t.waits_for)),
    ...fact("Times out", t.timeout ? el("span", { id: "panel-trigger-timeout" },
      timeEl(t.timeout), ` (${ago(t.timeout)})`) : el("span", { class: "muted" }, "never")),
    ...fact("Resumes with", t.next_method),
  ];
}


/** A crashed durable flow run: resumed where it stopped (its completed task calls are not
    made again); the server says why when it cannot be (not durable, not crashed). */
async function resumeCrashedRun(dagId, runId, onDone) {
  try {
    await api(`/dags/${enc(dagId)}/dagRuns/${enc(runId)}/resume`, { method: "POST" });
    toast(`Run ${runId} resumes: the scheduler starts its flow again.`);
    onDone();
  } catch (err) {
    toast(err.message, { error: true });
  }
}
