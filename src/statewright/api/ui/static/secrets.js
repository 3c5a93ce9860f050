// The connections and variables admin pages: save and delete through Airflow's REST API
// (/api/v2: create with POST, replace an existing one with PATCH). Errors are shown as text
// (textContent), never as HTML.
(function () {
  "use strict";
  const V2 = "/api/v2";

  async function send(method, url, body) {
    const headers = { "Content-Type": "application/json" };
    const csrf = document.querySelector('meta[name="csrf-token"]');
    if (csrf && csrf.content && method !== "GET") headers["X-CSRF-Token"] = csrf.content;
    const response = await fetch(url, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      let detail = response.status + " " + response.statusText;
      try { detail = (await response.json()).detail || detail; } catch (e) { /* not JSON */ }
      throw new Error(detail);
    }
    return response;
  }

  function fields(form) {
    const out = {};
    new FormData(form).forEach(function (value, name) {
      if (value !== "") out[name] = value;
    });
    return out;
  }

  function wire(formId, save) {
    const form = document.getElementById(formId);
    if (!form) return;
    const error = form.querySelector(".form-error");
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      error.textContent = "";
      try {
        await save(fields(form));
        window.location.reload();
      } catch (e) {
        error.textContent = e.message;
      }
    });
  }

  wire("connection-form", async function (data) {
    if (data.port) data.port = Number(data.port);
    const id = encodeURIComponent(data.connection_id);
    const exists = document.querySelector('tr[data-id="' + CSS.escape(data.connection_id) + '"]');
    if (exists) {
      data.password = data.password || null;
      await send("PATCH", V2 + "/connections/" + id, data);
    } else {
      await send("POST", V2 + "/connections", data);
    }
  });
  wire("variable-form", function (data) {
    const exists = document.querySelector('tr[data-key="' + CSS.escape(data.key) + '"]');
    return exists
      ? send("PATCH", V2 + "/variables/" + encodeURIComponent(data.key), data)
      : send("POST", V2 + "/variables", data);
  });

  document.addEventListener("click", async function (event) {
    const button = event.target.closest(".delete-connection, .delete-variable");
    if (!button) return;
    const isConn = button.classList.contains("delete-connection");
    const name = isConn ? button.dataset.id : button.dataset.key;
    if (!window.confirm("Delete " + name + "?")) return;
    try {
      await send("DELETE", V2 + (isConn ? "/connections/" : "/variables/") +
                 encodeURIComponent(name));
      window.location.reload();
    } catch (e) {
      window.alert(e.message);
    }
  });
})();
