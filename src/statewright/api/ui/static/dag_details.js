/* The DAG page's Details tab: shown instead of the grid and graph (address: #details). The
   details themselves are rendered by the server (doc_md through the Markdown sanitizer). */
"use strict";

(() => {
  const details = document.getElementById("details-wrap");
  const button = document.getElementById("view-details");
  if (!details || !button) return;
  const views = [document.querySelector(".grid-layout"), document.getElementById("legend")];
  const others = [document.getElementById("view-grid"), document.getElementById("view-graph")];

  const show = (on) => {
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
