/* statewright web UI: what the DAG page's chart tabs (Durations, Calendar) share: finding the
   tab's panel and button, and showing or hiding the panel among the page's views. Loaded with
   `defer` before the tabs' scripts. */
"use strict";

window.statewrightViewTab = (() => {
  /** The tab's panel, button and the page's DAG id; null when the page has no such tab. */
  function find(wrapId, buttonId) {
    const wrap = document.getElementById(wrapId);
    const button = document.getElementById(buttonId);
    const data = pageData();
    if (!wrap || !button || !data || !data.dag) return null;
    return { wrap, button, dagId: data.dag.dag_id };
  }

  /** Show (on) or hide the tab's panel. Shown, it hides `views` and the panels whose ids are
   *  `others`, and every other tab button stops being the active one. */
  function toggle(tab, on, views, others) {
    tab.wrap.hidden = !on;
    tab.button.classList.toggle("active", on);
    tab.button.setAttribute("aria-pressed", on ? "true" : "false");
    if (!on) return;
    for (const v of views) if (v) v.hidden = true;
    for (const id of others) {
      const other = document.getElementById(id);
      if (other) other.hidden = true;
    }
    for (const b of document.querySelectorAll(".view-tabs .btn")) {
      if (b !== tab.button) { b.classList.remove("active"); b.setAttribute("aria-pressed", "false"); }
    }
  }

  return { find, toggle };
})();
