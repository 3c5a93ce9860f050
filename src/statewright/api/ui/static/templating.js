/* statewright web UI: the trigger dialog's form built from a DAG's params, and the rendered
   template fields of a try in the task-instance panel. Loaded before app.js, whose helpers (api,
   el, $, enc, tiPath) it calls only when used; every value from a DAG file or a run is set as
   text, never as HTML. */
"use strict";

window.statewrightTemplating = (() => {
  let form = null; // { fields: Map<name, field> } while the trigger dialog shows params

  const typeOf = (schema) => {
    if (Array.isArray(schema.enum)) return "enum";
    const types = [].concat(schema.type || []).filter((t) => t !== "null");
    return types[0] || "any";
  };
  const allowsNull = (schema) => [].concat(schema.type || []).includes("null");

  function makeInput(name, kind, schema) {
    const id = `param-${name}`;
    if (kind === "enum") {
      const select = el("select", { id, dataset: { param: name } });
      schema.enum.forEach((option, i) => select.append(
        el("option", { value: String(i) }, option === null ? "(none)" : String(option))));
      return select;
    }
    if (kind === "boolean") return el("input", { id, type: "checkbox", dataset: { param: name } });
    if (kind === "integer" || kind === "number") {
      return el("input", { id, type: "number", step: kind === "integer" ? "1" : "any",
        min: schema.minimum, max: schema.maximum, dataset: { param: name } });
    }
    if (kind === "object" || kind === "array" || kind === "any") {
      return el("textarea", { id, rows: "3", spellcheck: "false", dataset: { param: name } });
    }
    const type = schema.format === "date" ? "date" : "text";
    return el("input", { id, type, autocomplete: "off", spellcheck: "false",
      dataset: { param: name } });
  }

  function setValue(f, value) {
    if (f.kind === "enum") {
      const i = f.schema.enum.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
      f.input.value = String(Math.max(i, 0));
    } else if (f.kind === "boolean") f.input.checked = Boolean(value);
    else if (f.input.tagName === "TEXTAREA") {
      f.input.value = value === undefined ? "" : JSON.stringify(value, null, 1);
    } else f.input.value = value === null || value === undefined ? "" : String(value);
  }

  // { value } or { error }; { skip: true } for an empty field that may stay unset
  function readValue(f) {
    const raw = f.input.value;
    if (f.kind === "enum") return { value: f.schema.enum[Number(raw)] };
    if (f.kind === "boolean") return { value: f.input.checked };
    if (raw.trim() === "") {
      if (allowsNull(f.schema)) return { value: null };
      if (f.kind === "string") return f.spec.has_default ? { value: "" }
        : { error: "A value is required." };
      return f.spec.has_default ? { skip: true } : { error: "A value is required." };
    }
    if (f.kind === "integer" || f.kind === "number") {
      const n = Number(raw);
      if (!Number.isFinite(n) || (f.kind === "integer" && !Number.isInteger(n))) {
        return { error: `Enter ${f.kind === "integer" ? "a whole number" : "a number"}.` };
      }
      if (f.schema.minimum !== undefined && n < f.schema.minimum) {
        return { error: `Must be at least ${f.schema.minimum}.` };
      }
      if (f.schema.maximum !== undefined && n > f.schema.maximum) {
        return { error: `Must be at most ${f.schema.maximum}.` };
      }
      return { value: n };
    }
    if (f.input.tagName === "TEXTAREA") {
      try { return { value: JSON.parse(raw) }; } catch (e) {
        return { error: `Not valid JSON: ${e.message}` };
      }
    }
    return { value: raw };
  }

  function confText() { return $("#trigger-conf").value.trim(); }

  // fields → the JSON view (keys that are not params are kept); true when every field is valid
  function syncJson() {
    if (!form) return true;
    let conf = {};
    try {
      const parsed = JSON.parse(confText() || "{}");
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) conf = parsed;
    } catch (_) { conf = {}; }
    let ok = true;
    for (const [name, f] of form.fields) {
      const r = readValue(f);
      f.error.textContent = r.error || "";
      f.wrap.classList.toggle("invalid", Boolean(r.error));
      if (r.error) ok = false;
      else if (r.skip) delete conf[name];
      else conf[name] = r.value;
    }
    $("#trigger-conf").value = JSON.stringify(conf, null, 2);
    return ok;
  }

  // the JSON view → fields (when it parses)
  function syncFields() {
    if (!form) return;
    let conf;
    try { conf = JSON.parse(confText() || "{}"); } catch (_) { return; }
    if (!conf || typeof conf !== "object" || Array.isArray(conf)) return;
    for (const [name, f] of form.fields) if (name in conf) setValue(f, conf[name]);
  }

  function field(name, spec) {
    const schema = spec.schema || {};
    const kind = typeOf(schema);
    const input = makeInput(name, kind, schema);
    const error = el("p", { class: "field-error", id: `param-${name}-error`, role: "alert" });
    const label = el("label", { for: input.id }, schema.title || name,
      spec.has_default ? null : el("span", { class: "required", title: "required" }, " *"));
    const wrap = el("div", { class: "param-field", dataset: { param: name } }, label,
      spec.description ? el("p", { class: "muted small description" }, spec.description) : null,
      input, error);
    const f = { name, spec, schema, kind, input, error, wrap };
    if (spec.has_default) setValue(f, spec.value);
    input.addEventListener(kind === "enum" || kind === "boolean" ? "change" : "input", syncJson);
    return f;
  }

  async function openTriggerForm(dagId) {
    const box = $("#trigger-params");
    const json = $("#trigger-json");
    if (!box || !json) return;
    form = null;
    box.replaceChildren();
    $("#trigger-conf").value = "{}";
    let spec = {};
    try { spec = (await api(`/dags/${enc(dagId)}/params`)).params || {}; } catch (_) { spec = {}; }
    const names = Object.keys(spec);
    box.hidden = names.length === 0;
    json.open = names.length === 0;
    if (!names.length) return;
    form = { fields: new Map() };
    for (const name of names) {
      const f = field(name, spec[name]);
      form.fields.set(name, f);
      box.append(f.wrap);
    }
    syncJson();
    $("#trigger-conf").oninput = syncFields;
  }

  // before submitting: the JSON view is what is sent; a field the person left invalid stops it
  function checkTriggerForm() {
    if (!form) return true;
    if ($("#trigger-json").open) { syncFields(); return true; }
    return syncJson();
  }

  // the API's 400 names each param: show each message under its field
  function showTriggerErrors(body) {
    if (!form || !body || !Array.isArray(body.errors)) return;
    for (const e of body.errors) {
      const f = form.fields.get(e.param);
      if (!f) continue;
      f.error.textContent = e.msg;
      f.wrap.classList.add("invalid");
    }
  }

  // -- the rendered template fields of one try (task-instance panel) -------------------------

  function renderedBox(key, tryNumber) {
    const body = el("div", {}, el("p", { class: "muted small" }, "Loading…"));
    const box = el("div", { class: "rendered-box", id: "panel-rendered" },
      el("h3", {}, `Rendered (try ${tryNumber})`), body);
    const path = `${tiPath(key.dagId, key.runId, key.taskId, key.mapIndex ?? -1)}` +
      `/renderedFields?try_number=${tryNumber}`;
    api(path).then((r) => {
      const names = Object.keys(r.rendered_fields);
      if (r.dag_kind === "flow") {
        body.replaceChildren(el("p", { class: "muted small", id: "rendered-none" },
          "A flow's task run has no template fields: its function is called with its " +
          "arguments as Python values (see its log and its result)."));
        return;
      }
      body.replaceChildren(names.length ? el("table", { class: "xcoms rendered" },
        el("tbody", {}, ...names.map((name) => {
          const value = r.rendered_fields[name];
          return el("tr", { dataset: { field: name } }, el("th", { class: "mono" }, name),
            el("td", {}, el("pre", { class: "rendered-value" },
              typeof value === "string" ? value : JSON.stringify(value, null, 2))));
        })))
        : el("p", { class: "muted small", id: "rendered-none" }, r.rendered
          ? "This task has no template fields."
          : "This try rendered no fields: the task has no template fields, or the try ended " +
            "before rendering (see its log)."));
    }).catch((e) => {
      body.replaceChildren(el("p", { class: "muted small" }, e.message));
    });
    return box;
  }

  // "Log" and "Rendered" tabs under a try; the chosen one stays chosen as the panel refreshes
  let tryView = "log";

  function tryTabs(logBox, key, tryNumber) {
    const rendered = renderedBox(key, tryNumber);
    const bar = el("div", { class: "view-tabs" });
    const show = (view) => {
      tryView = view;
      logBox.hidden = view !== "log";
      rendered.hidden = view !== "rendered";
      for (const b of bar.children) b.classList.toggle("on", b.dataset.view === view);
    };
    bar.append(
      el("button", { class: "tab", type: "button", id: "panel-log-tab", dataset: { view: "log" },
        onclick: () => show("log") }, "Log"),
      el("button", { class: "tab", type: "button", id: "panel-rendered-tab",
        dataset: { view: "rendered" }, onclick: () => show("rendered") }, "Rendered"));
    show(tryView);
    return el("div", { class: "try-views-box" }, bar, logBox, rendered);
  }

  return { openTriggerForm, checkTriggerForm, showTriggerErrors, tryTabs };
})();
