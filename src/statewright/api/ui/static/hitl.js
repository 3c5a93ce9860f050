/* statewright web UI: the "Required actions" page. Each task awaiting input gets a card with
   its subject and body, a form built from its params (a field per param, typed by its schema)
   and its options (a button each; check boxes and one Respond button when several may be
   chosen). Responses go to the REST API (PATCH .../hitlDetails). Everything from DAG files and
   responses is set as text (textContent), except the body: Markdown the server rendered and
   sanitized (as doc_md). Uses app.js's el, api and toast. */
"use strict";

function hitlUrl(ti) {
  const mi = ti.map_index >= 0 ? `/${ti.map_index}` : "";
  return `/dags/${enc(ti.dag_id)}/dagRuns/${enc(ti.dag_run_id)}/taskInstances/${enc(ti.task_id)}${mi}/hitlDetails`;
}

function schemaType(schema) {
  const t = schema && schema.type;
  return Array.isArray(t) ? t.find((x) => x !== "null") || "string" : t || "string";
}

/* One form field for a param: returns [node, read] where read() gives the value to send. */
function hitlField(name, param, prefill) {
  const schema = param.schema || {};
  const type = schemaType(schema);
  const initial = prefill !== undefined ? prefill : param.value;
  const id = `hitl-${name}-${Math.random().toString(36).slice(2, 8)}`;
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = el("select", { id, name }, ...schema.enum.map((v) =>
      el("option", { value: String(v), text: String(v), selected: v === initial })));
    read = () => schema.enum.find((v) => String(v) === input.value);
  } else if (type === "boolean") {
    input = el("input", { id, name, type: "checkbox", checked: Boolean(initial) });
    read = () => input.checked;
  } else if (type === "integer" || type === "number") {
    input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any",
      value: initial === null || initial === undefined ? "" : String(initial) });
    read = () => (input.value === "" ? null : Number(input.value));
  } else if (type === "object" || type === "array") {
    input = el("textarea", { id, name, rows: "3" });
    input.value = initial === null || initial === undefined ? "" : JSON.stringify(initial);
    read = () => { try { return JSON.parse(input.value); } catch (_) { return input.value; } };
  } else {
    input = el("input", { id, name, type: "text",
      value: initial === null || initial === undefined ? "" : String(initial) });
    read = () => input.value;
  }
  const label = el("label", { for: id, text: schema.title || name });
  const node = el("div", { class: "hitl-field" }, label, input,
    param.description ? el("small", { text: param.description }) : null);
  return [node, read];
}

/* The body as Markdown, rendered and sanitized by the server (body_html); else as text. */
function hitlBody(action) {
  if (!action.body) return null;
  if (!action.body_html) return el("div", { class: "hitl-body", text: action.body });
  const body = el("div", { class: "hitl-body md" });
  body.innerHTML = action.body_html;  // sanitized by the server (nh3)
  return body;
}

function hitlCard(action, prefill) {
  const ti = action.task_instance;
  const error = el("div", { class: "hitl-error", role: "alert" });
  const fields = Object.entries(action.params || {}).map(([name, param]) => {
    const [node, read] = hitlField(name, param, prefill[name]);
    return { name, node, read };
  });
  const card = el("article", { class: "hitl-card", dataset: { task: ti.task_id } },
    el("h2", { text: action.subject }),
    el("div", { class: "hitl-where" },
      el("a", { href: `/dags/${enc(ti.dag_id)}/runs/${enc(ti.dag_run_id)}`, text: `${ti.dag_id} · ${ti.dag_run_id}` }),
      ` · ${tiLabel(ti.task_id, ti.map_index)}`,
      action.timeout_at ? el("span", { class: "hitl-timeout" }, " · times out ",
        timeEl(action.timeout_at)) : ""),
    hitlBody(action),
    ...fields.map((f) => f.node));
  const send = async (chosen, buttons) => {
    error.textContent = "";
    const params_input = {};
    for (const f of fields) params_input[f.name] = f.read();
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await api(hitlUrl(ti), { method: "PATCH", body: { chosen_options: chosen, params_input } });
      card.replaceChildren(el("h2", { text: action.subject }),
        el("div", { class: "hitl-done", text: `Responded: ${chosen.join(", ")}. The task resumes.` }));
      toast(`Responded to ${ti.task_id}`);
    } catch (e) {
      error.textContent = e.message;
      buttons.forEach((b) => { b.disabled = false; });
    }
  };
  const options = el("div", { class: "hitl-options" });
  if (action.multiple) {
    const boxes = action.options.map((o) => el("input", { type: "checkbox", value: o,
      checked: (prefill._options || []).includes(o) }));
    const respond = el("button", { class: "btn primary", type: "button", text: "Respond" });
    respond.addEventListener("click", () =>
      send(boxes.filter((b) => b.checked).map((b) => b.value), [respond]));
    options.append(...boxes.map((b) => el("label", {}, b, ` ${b.value}`)), respond);
  } else {
    const buttons = action.options.map((o) => el("button", { class: "btn", type: "button", text: o }));
    buttons.forEach((b) => b.addEventListener("click", () => send([b.textContent], buttons)));
    options.append(...buttons);
  }
  card.append(options, error);
  return card;
}

function prefillFromQuery() {
  const out = {};
  const skip = new Set(["dag_id", "run_id", "task_id", "map_index"]);
  for (const [k, v] of new URLSearchParams(location.search)) {
    if (k === "_options") out._options = v.split(",");
    else if (!skip.has(k)) out[k] = v;
  }
  return out;
}

function initRequiredActions() {
  const root = document.getElementById("required-actions");
  const { actions } = pageData();
  if (!actions.length) {
    root.append(el("p", { class: "muted", text: "Nothing is waiting for a response." }));
    return;
  }
  const prefill = prefillFromQuery();
  root.append(...actions.map((a) => hitlCard(a, prefill)));
}

if (document.body.dataset.page === "required_actions") initRequiredActions();
