/* statewright web UI: the note of a DAG run (run page) or of a task instance (task instance
   page), as Airflow 3 has them: shown to everyone, written by operators and admins (PATCH
   /api/v2/…?update_mask=note, up to 1000 characters; an empty note clears it), with the
   history of who wrote what when (GET /api/v1/…/noteHistory, oldest first: the last entry is
   the note). Plain text, never HTML. Drawn in #notes on the run and task instance pages, and
   by the task instance panel (task_panel.js) through `statewrightNotes.mount`. */
"use strict";

window.statewrightNotes = (() => {
  const MAX = 1000;
  const canWrite = () => ["operator", "admin"].includes(document.body.dataset.role);

  /** The run's or task instance's addresses: its note history (v1) and its PATCH (v2). */
  function where(d) {
    if (!d) return null;
    if (d.ti) {
      const t = d.ti;
      const mapped = t.map_index !== null && t.map_index !== undefined && t.map_index >= 0;
      const base = `/dags/${enc(t.dag_id)}/dagRuns/${enc(t.dag_run_id)}/taskInstances/` +
        `${enc(t.task_id)}${mapped ? `/${t.map_index}` : ""}`;
      return { what: "task instance", history: `${base}/noteHistory`, patch: base };
    }
    if (d.run) {
      const base = `/dags/${enc(d.run.dag_id)}/dagRuns/${enc(d.run.dag_run_id)}`;
      return { what: "run", history: `${base}/noteHistory`, patch: base };
    }
    return null;
  }

  /** Draws and keeps the note of `target` in `box`; answers its controls. */
  function noteBox(box, target) {
    // Drawn at once, before its history is read, at the height an empty note takes: what is
    // below the box does not move when the note comes (a pointer on it stays where it was).
    const state = { history: [], editing: false, loading: true };
    const current = () => (state.history.length ? state.history[state.history.length - 1] : null);
    const who = (n) => `${n.username || "someone"}, ${fmtTime(n.created_at)}`;

    function shown() {
      if (state.loading) return el("p", { class: "muted note-empty note-text", text: "…" });
      const note = current();
      if (!note || !note.content) {
        return el("p", { class: "muted note-empty note-text",
          text: canWrite() ? `No note on this ${target.what} yet.` : `No note on this ${target.what}.` });
      }
      return el("div", {},
        el("p", { class: "note-text note-body", text: note.content }),
        el("p", { class: "muted small note-by", text: `Written by ${who(note)}` }));
    }

    function historyList() {
      if (state.history.length < 2 && !(state.history.length === 1 && !state.history[0].content)) {
        return null;
      }
      const items = [...state.history].reverse().map((n) => el("li", { class: "note-entry" },
        el("span", { class: "muted small", text: who(n) }), " ",
        n.content ? el("span", { class: "note-entry-text", text: n.content })
          : el("i", { class: "muted", text: "cleared the note" })));
      return el("details", { class: "note-history" },
        el("summary", { text: `History (${state.history.length})` }),
        el("ol", { class: "note-entries" }, items));
    }

    function editor() {
      const note = current();
      const area = el("textarea", { class: "note-input", rows: 4, maxlength: MAX,
        "aria-label": `Note of this ${target.what}` });
      area.value = (note && note.content) || "";
      const count = el("span", { class: "muted small note-count" });
      const recount = () => { count.textContent = `${area.value.length} / ${MAX}`; };
      area.addEventListener("input", recount);
      recount();
      const save = el("button", { class: "btn small primary note-save", type: "button",
        text: "Save note", onclick: () => write(area.value, save) });
      const cancel = el("button", { class: "btn small", type: "button", text: "Cancel",
        onclick: () => { state.editing = false; draw(); } });
      setTimeout(() => area.focus(), 0);
      return el("div", { class: "note-editor" }, area, el("div", { class: "note-actions" }, save, cancel, count));
    }

    function draw() {
      const head = el("h2", {}, "Note");
      if (canWrite() && state.loading) {  // holds the button's place until it can say what it does
        head.append(" ", el("button", { class: "btn small note-placeholder", type: "button",
          disabled: true, "aria-hidden": "true", text: "Add a note" }));
      } else if (canWrite() && !state.editing) {
        head.append(" ", el("button", { class: "btn small note-edit", type: "button",
          text: current() && current().content ? "Edit" : "Add a note",
          onclick: () => { state.editing = true; draw(); } }));
      }
      box.replaceChildren(...[head, state.editing ? editor() : shown(), historyList()].filter(Boolean));
    }

    async function load() {
      try {
        const body = await api(target.history);
        state.history = body.notes;
        state.loading = false;
      } catch (e) {
        box.replaceChildren(el("h2", {}, "Note"), el("p", { class: "muted", text: e.message }));
        return;
      }
      draw();
    }

    async function write(text, button) {
      button.disabled = true;
      const opts = { method: "PATCH", headers: { Accept: "application/json",
        "Content-Type": "application/json" }, body: JSON.stringify({ note: text.trim() ? text : null }) };
      const csrf = document.querySelector('meta[name="csrf-token"]');
      if (csrf && csrf.content) opts.headers["X-CSRF-Token"] = csrf.content;
      try {
        const res = await fetch(`/api/v2${target.patch}?update_mask=note`, opts);
        let body = null;
        try { body = await res.json(); } catch (_) { body = null; }
        if (!res.ok) throw new Error((body && typeof body.detail === "string" && body.detail) || `HTTP ${res.status}`);
      } catch (e) {
        toast(e.message, { error: true });
        button.disabled = false;
        return;
      }
      state.editing = false;
      toast(text.trim() ? "Note saved." : "Note cleared.");
      await load();
    }

    draw();
    load();
    return { history: () => state.history, reload: load };
  }

  const page = document.getElementById("notes");
  const onPage = page ? where(pageData()) : null;
  const shownOnPage = onPage ? noteBox(page, onPage) : null;

  /** A box with the note of a task instance ({dagId, runId, taskId, mapIndex}). */
  function mount(key) {
    const box = el("section", { class: "notes panel-notes", "aria-label": "Note" });
    noteBox(box, where({ ti: { dag_id: key.dagId, dag_run_id: key.runId, task_id: key.taskId,
                            map_index: key.mapIndex } }));
    return box;
  }

  return { mount, page: shownOnPage };
})();