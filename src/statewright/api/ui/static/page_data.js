/* statewright web UI: the page's first data, embedded by the server as JSON
   (<script id="page-data" type="application/json">), parsed once and shared by every script of
   the page. The DAG page's is 1.5 MB for a grid of 1,000 tasks x 25 runs; its graph, version
   selector, notes, Durations and Calendar tabs and grid each parsed it again (six parses, a
   third of the page's script time). Loaded in the head, before every other script; treat what
   it gives as read-only. */
"use strict";

/** The page's embedded data (parsed on the first call), or null on a page without any. */
function pageData() {
  if (pageData.parsed === undefined) {
    const node = document.getElementById("page-data");
    if (!node) return null; // not in the document (yet): parse when it is
    pageData.parsed = JSON.parse(node.textContent);
  }
  return pageData.parsed;
}
