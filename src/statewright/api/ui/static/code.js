/* statewright web UI: the code view. Choosing a version shows it (the form also works without
   this script, with its Show button). */
"use strict";

(() => {
  const select = document.getElementById("code-version");
  const form = document.getElementById("code-version-form");
  if (select && form) select.addEventListener("change", () => form.submit());
})();
