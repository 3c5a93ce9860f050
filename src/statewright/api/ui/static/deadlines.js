/* statewright web UI: the deadlines of a run, on the run page. Each alert's reference, when it
   is due, and whether the run met it (cancelled), missed it (with its callback's outcome) or it
   is still ahead; refreshed while the run is unfinished. Values are set as text (el()). */
"use strict";

(() => {
  const box = document.getElementById("run-deadlines");
  const data = pageData();
  if (!box || !data || !data.run) return;
  const run = data.run;
  const path = `/dags/${encodeURIComponent(run.dag_id)}/dagRuns/${encodeURIComponent(run.dag_run_id)}/deadlines`;
  const label = { pending: "ahead", missed: "missed", cancelled: "met" };

  const draw = (list) => {
    if (!list.total_entries) { box.hidden = true; return; }
    const rows = list.deadlines.map((d) => el("tr", { class: `deadline-${d.status}`, dataset: { status: d.status } },
      el("td", { class: "mono" }, d.reference),
      el("td", {}, timeEl(d.deadline_time)),
      el("td", {}, el("span", { class: `pill ${d.status === "missed" ? "red" : d.status === "cancelled" ? "green" : "gray"}` },
        label[d.status] || d.status)),
      el("td", { class: "mono small" }, `${d.callback} (${d.callback_kind})`),
      el("td", { class: "small" }, d.callback_status
        ? d.callback_status + (d.callback_error ? `: ${d.callback_error}` : "") : "")));
    box.replaceChildren(
      el("h2", { text: `Deadlines (${list.total_entries})` }),
      el("table", { class: "table", id: "deadline-table" },
        el("thead", {}, el("tr", {}, ...["Reference", "Deadline", "Status", "Callback", "Callback outcome"]
          .map((h) => el("th", { text: h })))),
        el("tbody", {}, ...rows)));
    box.hidden = false;
  };
  poll(async () => {
    const list = await api(path);
    draw(list);
    return list.deadlines.some((d) => d.status === "pending" || (d.status === "missed" &&
      (d.callback_status === "pending" || d.callback_status === "running"))) ? LIVE_MS : IDLE_MS * 5;
  }, 0);
})();
