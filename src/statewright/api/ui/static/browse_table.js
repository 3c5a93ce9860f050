/* statewright web UI: what the Browse pages share (DAG runs, task instances, XComs across
   DAGs). The filters form, the order and the page live in the address (?dag_id_pattern=…&
   order_by=-start_date&offset=50), so a list can be linked and the Back button works. Rows come
   from /api/v2's cross-DAG lists; a bad filter shows the API's answer above the table. Each
   list's module (browse_runs.js, browse_task_instances.js, browse_xcoms.js) gives its address
   and columns to `statewrightBrowse.start`. Loaded with `defer`, after app.js. */
"use strict";

window.statewrightBrowse = (() => {
  const LIMIT = 50;
  const form = document.getElementById("browse-filters");
  const table = document.getElementById("browse-table");
  const error = document.getElementById("browse-error");
  const range = document.getElementById("browse-range");
  const prev = document.getElementById("browse-prev");
  const next = document.getElementById("browse-next");
  const state = { list: null, ticket: 0, total: 0 };

  /** A datetime-local value (taken as UTC) as ISO 8601 with its zone; and back. */
  const toIso = (local) => (local.length === 16 ? `${local}:00Z` : `${local}Z`);
  const fromIso = (iso) => iso.replace(/Z$|[+-]00:00$/, "").slice(0, 19);

  function params() { return new URLSearchParams(location.search); }

  /** The form filled from the address. */
  function fill() {
    const p = params();
    for (const input of form.elements) {
      if (!input.name) continue;
      const v = p.get(input.name) || "";
      input.value = input.type === "datetime-local" ? fromIso(v) : v;
    }
  }

  /** The address's query from the form (empty fields left out), order and page kept apart. */
  function fromForm() {
    const p = new URLSearchParams();
    for (const input of form.elements) {
      if (!input.name || !input.value.trim()) continue;
      p.set(input.name, input.type === "datetime-local" ? toIso(input.value) : input.value.trim());
    }
    const order = params().get("order_by");
    if (order) p.set("order_by", order);
    return p;
  }

  function go(p) {
    const q = p.toString();
    history.pushState(null, "", location.pathname + (q ? `?${q}` : ""));
    load();
  }

  function head() {
    const order = params().get("order_by") || state.list.order;
    const cells = state.list.columns.map((c) => {
      if (!c.sort) return el("th", { text: c.label });
      const sort = order === c.sort ? "ascending" : order === `-${c.sort}` ? "descending" : null;
      return el("th", { "aria-sort": sort, "data-sort": c.sort },
        el("button", { type: "button", text: c.label, title: `Order by ${c.label}`,
          onclick: () => {
            const p = params();
            p.set("order_by", sort === "ascending" ? `-${c.sort}` : c.sort);
            p.delete("offset");
            go(p);
          } }));
    });
    table.tHead.replaceChildren(el("tr", {}, cells));
  }

  async function fetchRows(query) {
    const res = await fetch(`/api/v2${state.list.path(query)}?${query}`,
      { headers: { Accept: "application/json" } });
    if (res.status === 401) location.assign("/login?next=" + enc(location.pathname + location.search));
    let body = null;
    try { body = await res.json(); } catch (_) { body = null; }
    if (!res.ok) throw new Error((body && typeof body.detail === "string" && body.detail) || `HTTP ${res.status}`);
    return body;
  }

  async function load() {
    const ticket = ++state.ticket;
    fill();
    head();
    const p = params();
    const offset = Math.max(0, Number(p.get("offset")) || 0);
    const query = new URLSearchParams(p);
    query.set("limit", String(LIMIT));
    query.set("offset", String(offset));
    if (!query.get("order_by")) query.set("order_by", state.list.order);
    let body;
    try {
      body = await fetchRows(query);
    } catch (e) {
      if (ticket !== state.ticket) return;
      error.textContent = e.message;
      error.hidden = false;
      table.tBodies[0].replaceChildren();
      range.textContent = "";
      return;
    }
    if (ticket !== state.ticket) return;
    error.hidden = true;
    const rows = body[state.list.rows];
    state.total = body.total_entries;
    table.tBodies[0].replaceChildren(...(rows.length ? rows.map((r) =>
      el("tr", {}, state.list.columns.map((c) => el("td", {}, c.cell(r))))) : [
      el("tr", {}, el("td", { colspan: state.list.columns.length, class: "muted",
        text: "Nothing matches these filters." }))]));
    range.textContent = rows.length
      ? `${offset + 1}–${offset + rows.length} of ${state.total}` : `0 of ${state.total}`;
    prev.disabled = offset === 0;
    next.disabled = offset + rows.length >= state.total;
  }

  function page(step) {
    const p = params();
    const offset = Math.max(0, (Number(p.get("offset")) || 0) + step * LIMIT);
    if (offset) p.set("offset", String(offset)); else p.delete("offset");
    go(p);
  }

  /** Common cells. */
  const cells = {
    dag: (dagId) => el("a", { href: `/dags/${enc(dagId)}`, text: dagId }),
    run: (dagId, runId) => el("a", { href: runUrl(dagId, runId), text: runId }),
    task: (dagId, runId, taskId, mapIndex) => el("a", { text: taskId,
      href: `${runUrl(dagId, runId)}/tasks/${enc(taskId)}` +
        (mapIndex !== null && mapIndex !== undefined && mapIndex >= 0 ? `?map_index=${mapIndex}` : "") }),
    state: (r) => (r.state || r.statewright_state
      ? badge(r.statewright_state || r.state, r.state_name, { showType: false })
      : el("span", { class: "muted", text: "no status" })),
    time: (iso) => timeEl(iso),
    mapIndex: (i) => (i === null || i === undefined || i < 0 ? "" : String(i)),
  };

  function start(list) {
    state.list = list;
    form.addEventListener("submit", (event) => { event.preventDefault(); go(fromForm()); });
    document.getElementById("browse-clear").addEventListener("click", () => {
      const p = new URLSearchParams();
      const order = params().get("order_by");
      if (order) p.set("order_by", order);
      go(p);
    });
    prev.addEventListener("click", () => page(-1));
    next.addEventListener("click", () => page(1));
    window.addEventListener("popstate", load);
    load();
  }

  return { start, cells, total: () => state.total };
})();
