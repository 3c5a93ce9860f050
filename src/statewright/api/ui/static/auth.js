/* statewright web UI: what authentication needs in the browser. Filters that submit on change
   (no inline handlers: the Content-Security-Policy forbids them), and a page that lost its
   session goes to the login page. The CSRF token is sent by app.js's api() from the page's
   <meta name="csrf-token">. */
"use strict";

for (const node of document.querySelectorAll("[data-autosubmit]")) {
  node.addEventListener("change", () => node.form && node.form.submit());
}

window.addEventListener("unhandledrejection", (event) => {
  const reason = event.reason;
  if (reason && reason.status === 401 && document.body.dataset.page !== "login") {
    window.location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search));
  }
});
