/* statewright web UI: the DAG list page (its rows, pause switches, favourite stars and trigger
   buttons, kept live; the filters are a GET form, so they stay in the URL). Uses app.js's
   helpers. */
"use strict";

// -- page: DAG list -------------------------------------------------------------------------

function renderDagRows(data) {
  const body = $("#dag-rows");
  if (!data.dags.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 9, class: "muted" },
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
      el("td", { class: "narrow" }, favoriteStar(dag)),
      el("td", {},
        el("a", { class: "dag-id", href: `/dags/${enc(dag.dag_id)}` }, dag.dag_display_name || dag.dag_id),
        dag.kind === "flow" ? el("span", { class: "pill", title: "A flow" }, " flow") : null,
        dag.description ? el("div", { class: "desc" }, dag.description) : null,
        dag.tags.length ? el("div", {}, ...dag.tags.map((t) =>
          el("a", { class: "chip", href: `/?tag=${enc(t)}` }, `#${t}`))) : null),
      el("td", { class: "small owners" }, ...(dag.owners || []).map((o) =>
        el("a", { class: "owner", href: `/?owner=${enc(o)}`, title: `DAGs owned by ${o}` }, o))),
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

/** The star of a DAG: kept per user on the server (POST/DELETE …/favorite). */
function favoriteStar(dag) {
  const label = () => (dag.is_favorite ? `Remove ${dag.dag_id} from your favourites`
    : `Add ${dag.dag_id} to your favourites`);
  const button = el("button", {
    type: "button", class: `star${dag.is_favorite ? " on" : ""}`, "data-favorite": dag.dag_id,
    "aria-pressed": String(Boolean(dag.is_favorite)), title: label(), "aria-label": label(),
  }, dag.is_favorite ? "★" : "☆");
  button.addEventListener("click", async () => {
    const want = !dag.is_favorite;
    button.disabled = true;
    try {
      await api(`/dags/${enc(dag.dag_id)}/favorite`, { method: want ? "POST" : "DELETE" });
      dag.is_favorite = want;
      button.textContent = want ? "★" : "☆";
      button.classList.toggle("on", want);
      button.setAttribute("aria-pressed", String(want));
      button.title = label();
      button.setAttribute("aria-label", label());
    } catch (e) {
      toast(e.message, { error: true });
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function initDags() {
  let data = pageData();
  const query = JSON.parse($("#page-query").textContent);
  renderDagRows(data);
  const params = new URLSearchParams({ limit: query.limit, offset: query.offset });
  if (query.q) params.set("dag_id_pattern", query.q);
  if (query.tag) params.append("tags", query.tag);
  if (query.paused !== null) params.set("paused", query.paused);
  if (query.owner) params.append("owners", query.owner);
  if (query.last_run_state) params.set("last_dag_run_state", query.last_run_state);
  if (query.favorite !== null && query.favorite !== undefined) {
    params.set("is_favorite", query.favorite);
  }
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
