/* statewright web UI: the task instance panel (the DAG, run and task-instance pages): state,
   facts, doc_md, actions, XComs, task state, tries with their logs and rendered fields, and the
   state history. Uses app.js's helpers. */
"use strict";

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
    // the note (notes.js), kept across redraws; the task instance page shows it in #notes
    this.noteBox = window.statewrightNotes && document.body.dataset.page !== "task_instance"
      ? window.statewrightNotes.mount(this.key) : null;
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
    this.box.replaceChildren(...[head, stateLine, message, facts, this.noteBox, taskDoc(ti),
      actions, xcomBox,
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
    // one viewer per try while the panel shows this task instance: kept across the panel's
    // redraws, it follows a running try itself (remade while its log file was missing)
    const { dagId, runId, taskId, mapIndex } = this.key;
    let viewer = this.logCache.get(t.try_number);
    if (!viewer || viewer.querySelector(".log.missing")) {
      viewer = window.statewrightLogViewer.mount(tiPath(dagId, runId, taskId, mapIndex),
        t.try_number);
      this.logCache.set(t.try_number, viewer);
    }
    const logBox = el("div", { class: "log-box" }, el("h3", {}, `Log of try ${t.try_number}`),
      viewer);
    box.append(window.statewrightTemplating
      ? window.statewrightTemplating.tryTabs(logBox, this.key, t.try_number) : logBox);
    return box;
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
