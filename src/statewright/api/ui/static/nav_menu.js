/* statewright web UI: the top bar's menus (a .nav-menu-button in the nav and its list, e.g.
   Browse). The nav scrolls sideways where it does not fit, which would clip a list hanging
   inside it, so the list sits outside the nav and is fixed under its button when it opens
   (placed through the CSSOM: the CSP refuses style attributes). One menu open at a time; a
   click elsewhere, Escape or a resize closes it. */
"use strict";

(() => {
  const buttons = [...document.querySelectorAll(".nav-menu-button")];
  const listOf = (b) => document.getElementById(b.getAttribute("aria-controls"));
  const close = (b) => {
    const list = listOf(b);
    if (list) list.hidden = true;
    b.setAttribute("aria-expanded", "false");
  };
  const closeAll = () => buttons.forEach(close);
  const open = (b) => {
    closeAll();
    const list = listOf(b);
    if (!list) return;
    const at = b.getBoundingClientRect();
    list.style.setProperty("left", `${Math.round(at.left)}px`);
    list.style.setProperty("top", `${Math.round(at.bottom + 4)}px`);
    list.hidden = false;
    b.setAttribute("aria-expanded", "true");
    const first = list.querySelector("a");
    if (first) first.focus();
  };
  for (const b of buttons) {
    b.addEventListener("click", (event) => {
      event.stopPropagation();
      if (b.getAttribute("aria-expanded") === "true") close(b); else open(b);
    });
  }
  document.addEventListener("click", (event) => {
    if (!event.target.closest(".nav-menu-list")) closeAll();
  });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeAll(); });
  window.addEventListener("resize", closeAll);
})();
