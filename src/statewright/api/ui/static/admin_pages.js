/* statewright web UI: the operator pages (backfills, pools, triggers and triggerers). Each draws
   its embedded JSON, refreshes it from the REST API and sends its actions through the API.
   Every value is set as text (textContent), never as HTML. Uses app.js's helpers (el, api,
   pageData, timeEl, ago, toast, poll, runUrl, enc). Pools and a backfill's pause, unpause and
   cancel go through Airflow's /api/v2; a backfill's progress and plan, jobs and triggers are
   statewright's and stay on /api/v1 (docs/decisions/api-v2.md). */
"use strict";

const V2 = "/api/v2";

const OPERATOR_PAGES = (() => {
  const ROLE = document.body.dataset.role;
  const canOperate = ROLE === "operator" || ROLE === "admin";
  const isAdmin = ROLE === "admin";

  /** A stacked bar: segments [{cls, value, label}] out of total, widths set through CSSOM. */
  function bar(segments, total, title) {
    const box = el("div", { class: "op-bar", title, role: "img", "aria-label": title });
    const whole = Math.max(total, 1);
    for (const s of segments) {
      if (!s.value) continue;
      const seg = el("i", { class: `seg ${s.cls}`, title: `${s.label}: ${s.value}` });
      seg.style.width = `${Math.min(100, (100 * s.value) / whole)}%`;
      box.append(seg);
    }
    return box;
  }

  function button(text, cls, onclick) {
    return el("button", { type: "button", class: `btn small ${cls}`, onclick }, text);
  }

  async function act(fn, done) {
    try {
      await fn();
      if (done) await done();
    } catch (e) {
      toast(e.message, { error: true });
    }
  }

  function formError(form, message) {
    form.querySelector(".form-error").textContent = message || "";
  }

  // -- backfills ---------------------------------------------------------------------------------

  const PROGRESS = [
    ["success", "success"], ["failed", "failed"], ["cancelled", "cancelled"],
    ["running", "running"], ["queued", "queued"], ["paused", "paused"],
  ];

  function backfillState(b) {
    if (b.completed_at) return b.is_paused ? "cancelled" : "completed";
    return b.is_paused ? "paused" : "running";
  }

  function backfillRow(b, refresh) {
    const p = b.progress;
    const finished = p.success + p.failed + p.cancelled;
    const segments = PROGRESS.map(([key, cls]) => ({ cls, value: p[key], label: key }));
    const counts = PROGRESS.filter(([key]) => p[key]).map(([key]) => `${key} ${p[key]}`);
    if (p.pending) counts.push(`waiting ${p.pending}`);
    if (p.skipped) counts.push(`left alone ${p.skipped}`);
    const state = backfillState(b);
    const actions = el("td", { class: "op-actions" });
    if (canOperate && !b.completed_at) {
      const path = `${V2}/backfills/${b.id}`;
      actions.append(b.is_paused
        ? button("Unpause", "unpause", () => act(() => api(`${path}/unpause`, { method: "PUT" }), refresh))
        : button("Pause", "pause", () => act(() => api(`${path}/pause`, { method: "PUT" }), refresh)),
      button("Cancel", "cancel danger", () => {
        if (!window.confirm(`Cancel backfill ${b.id} of ${b.dag_id}? Its queued runs are ` +
                            "cancelled and its dates without a run get none; running runs finish.")) return;
        act(() => api(`${path}/cancel`, { method: "PUT" }), refresh);
      }));
    }
    return el("tr", { dataset: { id: String(b.id) } },
      el("td", {}, String(b.id)),
      el("td", {}, el("a", { href: `/dags/${enc(b.dag_id)}`, text: b.dag_id })),
      el("td", {}, timeEl(b.from_date), " → ", timeEl(b.to_date), b.run_backwards ? " (newest first)" : ""),
      el("td", {}, b.reprocess_behavior),
      el("td", {}, String(b.max_active_runs)),
      el("td", {}, el("span", { class: `pill op-state ${state}`, text: state })),
      el("td", { class: "op-progress" },
        bar(segments, p.total, `${finished} of ${p.total} date(s) finished`),
        el("span", { class: "small", text: `${finished}/${p.total}` }),
        el("div", { class: "small muted counts", text: counts.join(", ") })),
      el("td", { title: b.created_at }, ago(b.created_at)),
      actions);
  }

  function backfillBody(form) {
    const data = new FormData(form);
    const utc = (v) => (v.length === 16 ? `${v}:00Z` : `${v}Z`);
    const body = {
      dag_id: data.get("dag_id"),
      from_date: utc(String(data.get("from_date"))),
      to_date: utc(String(data.get("to_date"))),
      reprocess_behavior: data.get("reprocess_behavior"),
      max_active_runs: Number(data.get("max_active_runs")),
      run_backwards: data.get("run_backwards") === "on",
    };
    const conf = String(data.get("dag_run_conf") || "").trim();
    if (conf) {
      try {
        body.dag_run_conf = JSON.parse(conf);
      } catch (e) {
        throw new Error(`dag_run.conf is not valid JSON (${e.message}); nothing was sent.`);
      }
      if (body.dag_run_conf === null || typeof body.dag_run_conf !== "object" ||
          Array.isArray(body.dag_run_conf)) {
        throw new Error("dag_run.conf must be a JSON object, such as {\"key\": 1}; nothing was sent.");
      }
    }
    return body;
  }

  function drawPlan(box, plan) {
    const runs = plan.backfills.filter((d) => d.action !== "skip").length;
    const rows = plan.backfills.map((d) => el("tr", { class: `plan-${d.action}` },
      el("td", {}, timeEl(d.logical_date)),
      el("td", {}, d.action === "reprocess" ? "run again" : d.action),
      el("td", { class: "muted" }, d.reason || d.existing_run_id || "")));
    const parts = [el("p", { class: "plan-summary" },
      `Dry run: ${plan.total_entries} date(s); ${runs} would run. Nothing was changed.`)];
    if (plan.dag_is_paused) {
      parts.push(el("p", { class: "warn" },
        "The DAG is paused: the backfill's runs start once it is unpaused."));
    }
    box.replaceChildren(...parts,
      el("table", { class: "admin-table op-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Logical date"), el("th", {}, "Action"),
          el("th", {}, "Reason / existing run"))),
        el("tbody", {}, rows)));
    box.hidden = false;
  }

  function initBackfills() {
    const data = pageData();
    const form = $("#backfill-form");
    const select = $("#backfill-dag");
    for (const d of data.dags) {
      const note = d.schedule ? ` (${d.schedule})` : "";
      select.append(el("option", { value: d.dag_id }, d.dag_id + note + (d.is_paused ? ", paused" : "")));
    }
    let listed = data.backfills;
    const tbody = $("#backfills tbody");
    const draw = () => {
      tbody.replaceChildren(...(listed.backfills.length
        ? listed.backfills.map((b) => backfillRow(b, refresh))
        : [el("tr", {}, el("td", { colspan: "9", class: "muted" }, "No backfills yet."))]));
    };
    const busy = () => listed.backfills.some((b) => !b.completed_at && !b.is_paused);
    const refresh = async () => {
      listed = await api("/backfills");
      draw();
      return busy() ? 2000 : 10000;
    };
    const planBox = $("#backfill-plan");
    $("#backfill-preview").addEventListener("click", async () => {
      formError(form, "");
      if (!form.reportValidity()) return;
      try {
        drawPlan(planBox, await api("/backfills/dry_run", { method: "POST", body: backfillBody(form) }));
      } catch (e) {
        planBox.hidden = true;
        formError(form, e.message);
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      formError(form, "");
      try {
        const created = await api("/backfills", { method: "POST", body: backfillBody(form) });
        planBox.hidden = true;
        const dag = data.dags.find((d) => d.dag_id === created.dag_id);
        const paused = dag && dag.is_paused ? ` The DAG ${created.dag_id} is paused: its runs start once it is unpaused.` : "";
        toast(`Backfill ${created.id} of ${created.dag_id} created: ${created.progress.total} date(s).${paused}`,
          { error: Boolean(paused) });
        await refresh();
      } catch (e) {
        formError(form, e.message);
      }
    });
    draw();
    if (!canOperate) form.hidden = true;
    poll(refresh, busy() ? 2000 : 10000);
  }

  // -- pools --------------------------------------------------------------------------------------

  function poolRow(p, fill, refresh) {
    const deferred = p.include_deferred ? p.deferred_slots : 0;
    const segments = [
      { cls: "running", value: p.running_slots, label: "running" },
      { cls: "queued", value: p.queued_slots, label: "queued" },
      { cls: "deferred", value: deferred, label: "deferred" },
    ];
    const total = Math.max(p.slots, p.occupied_slots);
    const actions = el("td", { class: "op-actions" });
    if (isAdmin) {
      actions.append(button("Edit", "edit", () => fill(p)));
      if (p.name !== "default_pool") {
        actions.append(button("Delete", "delete danger", () => {
          if (!window.confirm(`Delete pool ${p.name}? Its unfinished task instances wait until it exists again.`)) return;
          act(() => api(`${V2}/pools/${enc(p.name)}`, { method: "DELETE" }), refresh);
        }));
      }
    }
    return el("tr", { dataset: { name: p.name } },
      el("td", {}, p.name),
      el("td", {}, String(p.slots)),
      el("td", { class: "op-progress" },
        bar(segments, total, `${p.occupied_slots} of ${p.slots} slot(s) taken`),
        el("span", { class: "small", text: `${p.occupied_slots}/${p.slots}` })),
      el("td", {}, String(p.running_slots)),
      el("td", {}, String(p.queued_slots)),
      el("td", { title: p.include_deferred ? "counted" : "not counted" },
        String(p.deferred_slots) + (p.include_deferred ? "" : " (not counted)")),
      el("td", {}, String(p.scheduled_slots)),
      el("td", { class: p.open_slots <= 0 ? "warn open" : "open" }, String(p.open_slots)),
      el("td", {}, p.description || ""),
      actions);
  }

  function initPools() {
    let listed = pageData();
    const form = $("#pool-form");
    const tbody = $("#pools tbody");
    const fill = (p) => {
      form.elements.name.value = p.name;
      form.elements.slots.value = p.slots;
      form.elements.description.value = p.description || "";
      form.elements.include_deferred.checked = p.include_deferred;
      form.elements.slots.focus();
    };
    const draw = () => tbody.replaceChildren(...listed.pools.map((p) => poolRow(p, fill, refresh)));
    const refresh = async () => {
      listed = await api(`${V2}/pools?limit=100`);
      draw();
      return 5000;
    };
    if (form) {
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        formError(form, "");
        const name = form.elements.name.value;
        const description = form.elements.description.value;
        const body = {
          slots: Number(form.elements.slots.value),
          include_deferred: form.elements.include_deferred.checked,
        };
        try {
          if (listed.pools.some((p) => p.name === name)) {  // an emptied description is cleared
            await api(`${V2}/pools/${enc(name)}`, { method: "PATCH", body: { ...body, description } });
          } else {
            await api(`${V2}/pools`, { method: "POST", body: { name, ...body, description: description || null } });
          }
          form.reset();
          toast(`Pool ${name} saved.`);
          await refresh();
        } catch (e) {
          formError(form, e.message);
        }
      });
    }
    draw();
    poll(refresh, 5000);
  }

  // -- triggers and triggerers ----------------------------------------------------------------------

  function jobRow(j, show) {
    const state = j.state === "running" ? (j.is_alive ? "alive" : "dead") : j.state;
    const load = j.job_type === "triggerer"
      ? el("td", { class: "op-progress" },
        bar([{ cls: "running", value: j.held_triggers, label: "triggers" }], j.capacity || j.held_triggers,
          `${j.held_triggers} trigger(s) of ${j.capacity || "?"}`),
        j.held_triggers
          ? el("button", { type: "button", class: "btn small held", title: "Show the triggers it holds",
            onclick: () => show(j.id) }, String(j.held_triggers))
          : el("span", { class: "small", text: "0" }))
      : el("td", { class: "muted" }, "—");
    return el("tr", { dataset: { id: String(j.id) } },
      el("td", {}, String(j.id)),
      el("td", {}, j.job_type),
      el("td", {}, j.hostname || ""),
      el("td", {}, j.pid === null ? "" : String(j.pid)),
      el("td", {}, el("span", { class: `pill op-state ${state}`, text: state })),
      el("td", { title: j.latest_heartbeat }, ago(j.latest_heartbeat)),
      load,
      el("td", {}, j.capacity === null ? "" : String(j.capacity)),
      el("td", {}, timeEl(j.start_date)));
  }

  function triggerRow(t) {
    const short = t.classpath.split(".").pop();
    const ti = t.task_instance;
    const waiting = ti
      ? el("td", {}, el("a", { href: `${runUrl(ti.dag_id, ti.run_id)}/tasks/${enc(ti.task_id)}`,
        text: `${ti.dag_id} / ${ti.task_id}` }), el("div", { class: "small muted", text: `${ti.run_id} · try ${ti.try_number}` }))
      : el("td", { class: "muted" }, "none (orphaned)");
    let triggerer = el("span", { class: "muted", text: "unassigned" });
    if (t.triggerer_id !== null) {
      triggerer = el("span", {}, `#${t.triggerer_id}${t.triggerer_hostname ? " @ " + t.triggerer_hostname : ""} `,
        el("span", { class: `pill op-state ${t.triggerer_alive ? "alive" : "dead"}`,
          text: t.triggerer_alive ? "alive" : "dead" }));
    }
    const timeout = ti && ti.trigger_timeout
      ? el("span", { title: ti.trigger_timeout }, ago(ti.trigger_timeout)) : el("span", { class: "muted", text: "none" });
    const kwargs = t.kwargs !== null
      ? el("code", { class: "kwargs", text: t.kwargs })
      : el("span", { class: "muted", text: t.kwargs_error || "" });
    return el("tr", { dataset: { id: String(t.id) } },
      el("td", {}, String(t.id)),
      el("td", { title: t.classpath }, short, el("div", { class: "small muted", text: t.classpath })),
      waiting,
      el("td", {}, triggerer),
      el("td", { title: t.created_date }, ago(t.created_date)),
      el("td", {}, timeout),
      el("td", {}, kwargs));
  }

  function initTriggers() {
    let data = pageData();
    let only = null;  // the triggerer whose triggers are shown, or null for all
    const show = (id) => { only = id; draw(); };
    const draw = () => {
      const jobs = data.jobs.jobs;
      $("#jobs tbody").replaceChildren(...(jobs.length ? jobs.map((j) => jobRow(j, show))
        : [el("tr", {}, el("td", { colspan: "9", class: "muted" }, "No jobs have run yet."))]));
      const n = data.jobs.unassigned_triggers;
      $("#unassigned").textContent = n ? `${n} trigger(s) not claimed by any triggerer.` : "";
      const filter = $("#trigger-filter");
      filter.replaceChildren(...(only === null ? [] : [
        `The triggers triggerer #${only} holds. `,
        el("button", { type: "button", class: "btn small", onclick: () => show(null) }, "Show all")]));
      const triggers = data.triggers.triggers.filter((t) => only === null || t.triggerer_id === only);
      $("#triggers tbody").replaceChildren(...(triggers.length ? triggers.map(triggerRow)
        : [el("tr", {}, el("td", { colspan: "7", class: "muted" }, "No triggers: no task instance is deferred."))]));
    };
    const refresh = async () => {
      const [jobs, triggers] = await Promise.all([api("/jobs"), api("/triggers?limit=500")]);
      data = { jobs, triggers };
      draw();
      return 5000;
    };
    draw();
    poll(refresh, 5000);
  }

  return { backfills: initBackfills, pools: initPools, triggers: initTriggers };
})();

(OPERATOR_PAGES[document.body.dataset.page] || (() => {}))();
