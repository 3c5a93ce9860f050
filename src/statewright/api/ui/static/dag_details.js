/* The DAG page's Details tab: shown instead of the grid and graph (address: #details). The
   details themselves are rendered by the server (doc_md through the Markdown sanitizer), but
   for the table of tasks: drawn here from the page's data when the tab is first shown (a DAG of
   1,000 tasks made the page 3,000 lines longer for a tab most opens never show). */
"use strict";

(() => {
  const details = document.getElementById("details-wrap");
  const button = document.getElementById("view-details");
  if (!details || !button) return;
  const views = [document.querySelector(".grid-layout"), document.getElementById("legend")];
  const others = [document.getElementById("view-grid"), document.getElementById("view-graph")];

  const tasksBody = document.querySelector("#details-tasks tbody");
  const fillTasks = () => {
    const data = pageData();
    if (!tasksBody || tasksBody.childElementCount || !data || !data.dag) return;
    // (loaded before app.js, whose el() a #details address would call too early)
    const cell = (text, className, title) => {
      const td = document.createElement("td");
      if (className) td.className = className;
      if (title) td.title = title;
      td.textContent = text;
      return td;
    };
    tasksBody.append(...data.dag.tasks.map((t) => {
      const tr = document.createElement("tr");
      tr.dataset.taskId = t.task_id;
      tr.append(cell(t.task_id, "mono"),
        cell(t.operator_name || t.operator, "mono", `class ${t.operator}`),
        cell(t.trigger_rule, "mono small"), cell(String(t.retries)));
      return tr;
    }));
  };

  const show = (on) => {
    if (on) fillTasks();
    details.hidden = !on;
    for (const v of views) if (v) v.hidden = on;
    button.classList.toggle("active", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) for (const b of others) if (b) b.classList.remove("active");
    const url = location.pathname + location.search + (on ? "#details" : "");
    history.replaceState(null, "", url);
  };
  button.addEventListener("click", () => show(true));
  for (const b of others) {
    if (b) b.addEventListener("click", () => { if (!details.hidden) show(false); });
  }
  window.addEventListener("hashchange", () => show(location.hash === "#details"));
  if (location.hash === "#details") show(true);
})();
