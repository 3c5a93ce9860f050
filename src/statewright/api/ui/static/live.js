/* statewright web UI: live updates. Listens to the state history as Server-Sent Events
   (/api/v1/events/stream) and tells the page at once that something changed; the page then
   reads the REST API as its polling does (polling stays on as the fallback). A hidden tab
   closes its stream (a browser allows only a few open connections per server) and refreshes
   when it is shown again. */
"use strict";

(() => {
  const STREAM = "/api/v1/events/stream";
  const GAP_MS = 50;  // events that come together are one refresh

  /** Call onChange(events) soon after each state change of the DAG / run (all when empty).
      Returns a function that stops listening. */
  function watch(query, onChange) {
    if (typeof EventSource === "undefined") return () => {};
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query || {})) {
      if (value !== null && value !== undefined && value !== "") params.set(key, value);
    }
    const qs = params.toString();
    let source = null;
    let batch = [];
    let timer = null;
    const flush = () => {
      timer = null;
      const events = batch;
      batch = [];
      try { onChange(events); } catch (e) { console.error(e); }
    };
    const open = () => {
      source = new EventSource(STREAM + (qs ? "?" + qs : ""));
      source.addEventListener("transition", (ev) => {
        try { batch.push(JSON.parse(ev.data)); } catch (_) { return; }
        if (timer === null) timer = setTimeout(flush, GAP_MS);
      });
      source.addEventListener("open", () => { document.body.dataset.live = "open"; });
      source.addEventListener("error", () => {
        // The browser reconnects by itself (from the last event id); polling covers the gap.
        document.body.dataset.live = source.readyState === EventSource.CLOSED ? "closed"
          : "retrying";
      });
    };
    const close = () => {
      if (source) source.close();
      source = null;
      document.body.dataset.live = "paused";
    };
    const onVisibility = () => {
      if (document.hidden) close();
      else if (!source) { open(); flush(); }  // what changed meanwhile: read it now
    };
    document.addEventListener("visibilitychange", onVisibility);
    if (!document.hidden) open();
    return () => {
      document.removeEventListener("visibilitychange", onVisibility);
      close();
      if (timer !== null) clearTimeout(timer);
    };
  }

  window.statewrightLive = { watch };
})();
