/* statewright web UI: the users and roles page (admins only). A user's role is changed with
   its select, a user deactivated or reactivated with its button, a user added in a dialog;
   each through the REST API (PATCH/POST /api/v1/users), then the page is read again.
   Uses app.js's helpers (api, $, enc, toast). */
"use strict";

(() => {
  const error = (text) => { $("#users-error").textContent = text; };

  async function change(username, body, done) {
    error("");
    try {
      await api(`/users/${enc(username)}`, { method: "PATCH", body });
      toast(done);
      location.reload();
    } catch (e) {
      error(e.message);
      return false;
    }
    return true;
  }

  for (const select of document.querySelectorAll("#users .role-select")) {
    const before = select.value;
    select.addEventListener("change", async () => {
      const ok = await change(select.dataset.username, { role: select.value },
        `${select.dataset.username} is now ${select.value}`);
      if (!ok) select.value = before;
    });
  }

  for (const button of document.querySelectorAll("#users .user-active")) {
    button.addEventListener("click", () => {
      const active = button.dataset.active !== "true";
      change(button.dataset.username, { active },
        `${button.dataset.username} ${active ? "reactivated" : "deactivated"}`);
    });
  }

  const dialog = $("#user-create-dialog");
  $("#user-create-open").addEventListener("click", () => {
    $("#user-create-error").textContent = "";
    dialog.showModal();
    $("#user-new-name").focus();
  });
  $("#user-create-cancel").addEventListener("click", () => dialog.close());
  $("#user-create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { username: $("#user-new-name").value.trim(),
                   password: $("#user-new-password").value, role: $("#user-new-role").value };
    const err = $("#user-create-error");
    if (!body.username) { err.textContent = "Give a username."; return; }
    if (body.password.length < 8) {
      err.textContent = "The password is too short: use at least 8 characters.";
      return;
    }
    $("#user-create-submit").disabled = true;
    try {
      await api("/users", { method: "POST", body });
      dialog.close();
      toast(`User ${body.username} added (${body.role})`);
      location.reload();
    } catch (e) {
      err.textContent = e.message;
    } finally {
      $("#user-create-submit").disabled = false;
    }
  });
})();
