/* statewright web UI: light or dark. Loaded in the page's head, before it is drawn: the
   choice kept in localStorage ("light" or "dark") is set on <html data-theme>; without one the
   page follows the system's prefers-color-scheme (app.css). The user menu's button cycles
   Auto → Light → Dark. */
"use strict";

(() => {
  const KEY = "statewright-theme";
  const MODES = ["auto", "light", "dark"];
  const LABEL = { auto: "◐ Auto", light: "☀ Light", dark: "☾ Dark" };
  const stored = () => {
    try { return MODES.includes(localStorage.getItem(KEY)) ? localStorage.getItem(KEY) : "auto"; }
    catch (_) { return "auto"; }
  };
  const apply = (mode) => {
    if (mode === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = mode;
  };
  apply(stored());
  const wire = () => {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const show = (mode) => {
      button.textContent = LABEL[mode];
      button.dataset.mode = mode;
      button.title = `Colours: ${mode === "auto" ? "as the system's setting" : mode} (click to change)`;
    };
    show(stored());
    button.addEventListener("click", () => {
      const next = MODES[(MODES.indexOf(stored()) + 1) % MODES.length];
      try {
        if (next === "auto") localStorage.removeItem(KEY); else localStorage.setItem(KEY, next);
      } catch (_) { /* storage refused: the choice lasts for this page only */ }
      apply(next);
      show(next);
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
