/* statewright web UI: the log viewer of a try (task panel and task-instance page), as Airflow
   3's: line numbers, a level filter (each line's level read from it; a traceback's lines keep
   the level of the line before), search with highlight and next/previous, wrap, download of
   the whole file, and follow: while the try runs, the log is read on from the byte where the
   last read ended (…/logs/{try}/chunk?offset=), so no line is fetched twice.
   Uses app.js's helpers (el, api, enc). */
"use strict";

window.statewrightLogViewer = (() => {
  const LEVELS = { DEBUG: 10, INFO: 20, WARNING: 30, WARN: 30, ERROR: 40, EXCEPTION: 40,
    CRITICAL: 50, FATAL: 50 };
  const LEVEL_RE = /\b(DEBUG|INFO|WARNING|WARN|ERROR|EXCEPTION|CRITICAL|FATAL)\b/;
  const NAME = { 10: "debug", 20: "info", 30: "warning", 40: "error", 50: "critical" };
  const CHUNK = 1_000_000;
  const MAX_SHOWN = 8_000_000;
  const FOLLOW_MS = 1500;

  /** The level of a line: named near its start, else the level of the line before. */
  function levelOf(text, previous) {
    const m = LEVEL_RE.exec(text.slice(0, 120));
    return m ? LEVELS[m[1]] : previous;
  }

  function toolbar(v) {
    const level = el("select", { id: "log-level", "aria-label": "Lowest level shown" },
      el("option", { value: "0" }, "All levels"),
      ...[10, 20, 30, 40].map((n) => el("option", { value: String(n) },
        `${NAME[n][0].toUpperCase()}${NAME[n].slice(1)} and above`)));
    level.addEventListener("change", () => { v.minLevel = Number(level.value); v.filter(); });
    const search = el("input", { type: "search", id: "log-search", placeholder: "Search the log",
      "aria-label": "Search the log", autocomplete: "off", spellcheck: "false" });
    search.addEventListener("input", () => { v.query = search.value; v.highlight(0); });
    search.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); v.step(ev.shiftKey ? -1 : 1); }
    });
    const wrap = el("input", { type: "checkbox", id: "log-wrap", checked: true });
    wrap.addEventListener("change", () => v.lines.classList.toggle("nowrap", !wrap.checked));
    const follow = el("input", { type: "checkbox", id: "log-follow", disabled: true });
    follow.addEventListener("change", () => { v.following = follow.checked; v.follow(); });
    v.followBox = follow;
    v.count = el("span", { class: "muted small log-matches", id: "log-matches" }, "");
    return el("div", { class: "log-toolbar" }, level, search, v.count,
      el("button", { type: "button", class: "btn small", id: "log-prev", title: "Previous match",
        onclick: () => v.step(-1) }, "↑"),
      el("button", { type: "button", class: "btn small", id: "log-next", title: "Next match",
        onclick: () => v.step(1) }, "↓"),
      el("label", { class: "small log-opt" }, wrap, " Wrap"),
      el("label", { class: "small log-opt", title: "Show new lines as the try writes them" },
        follow, " Follow"),
      el("a", { class: "btn small", id: "log-download", href: `${API}${v.base}/download`,
        download: "", title: "The whole log of this try, as a file" }, "⤓ Download"));
  }

  class Viewer {
    constructor(base) {
      this.base = base;
      this.offset = 0;
      this.count = null;
      this.level = 20;
      this.minLevel = 0;
      this.query = "";
      this.current = -1;
      this.following = false;
      this.writing = false;
      this.lines = el("div", { class: "log log-lines", id: "panel-log", role: "log" }, "Loading…");
      this.node = el("div", { class: "log-viewer" }, toolbar(this), this.lines);
    }

    async load() {
      try {
        let shown = 0;
        let chunk;
        do {
          chunk = await api(`${this.base}/chunk?offset=${this.offset}&max_bytes=${CHUNK}`);
          if (this.offset === 0) this.lines.replaceChildren();
          this.append(chunk);
          shown += chunk.next_offset - chunk.offset;
        } while (chunk.next_offset < chunk.size && chunk.next_offset > chunk.offset &&
                 shown < MAX_SHOWN);
        if (chunk.next_offset < chunk.size && !chunk.writing) {
          this.lines.append(el("div", { class: "log-note muted" },
            `Only the first ${shown} of ${chunk.size} bytes are shown: download the whole log.`));
        }
        if (!this.lines.childElementCount) {
          this.lines.append(el("div", { class: "log-note muted" },
            chunk.missing && !chunk.writing ? chunk.missing : "(empty)"));
        }
        this.writing = chunk.writing;
        this.followBox.disabled = !chunk.writing;
        if (chunk.writing && !this.followBox.dataset.touched) {
          this.followBox.checked = true;
          this.following = true;
          this.follow();
        }
      } catch (e) {
        this.lines.textContent = e.message;
        this.lines.classList.add("missing");
      }
    }

    append(chunk) {
      this.offset = chunk.next_offset;
      const text = chunk.content.endsWith("\n") ? chunk.content.slice(0, -1) : chunk.content;
      if (!chunk.content) return;
      const atEnd = this.lines.scrollHeight - this.lines.scrollTop - this.lines.clientHeight < 24;
      const before = this.lines.querySelectorAll(".log-line").length;
      const rows = text.split("\n").map((line, i) => {
        this.level = levelOf(line, this.level);
        const row = el("div", { class: `log-line lvl-${NAME[this.level] || "info"}`,
          dataset: { line: before + i + 1, level: this.level } },
          el("span", { class: "ln", "aria-hidden": "true" }, String(before + i + 1)),
          el("span", { class: "lt" }, line));
        row.hidden = this.level < this.minLevel;
        return row;
      });
      this.lines.append(...rows);
      if (this.query) this.highlight(Math.max(this.current, 0));
      if (this.following && atEnd) this.lines.scrollTop = this.lines.scrollHeight;
    }

    filter() {
      for (const row of this.lines.querySelectorAll(".log-line")) {
        row.hidden = Number(row.dataset.level) < this.minLevel;
      }
      this.highlight(0);
    }

    /** Mark every match of the query in the shown lines; make match ``index`` the current. */
    highlight(index) {
      const q = this.query.toLowerCase();
      for (const lt of this.lines.querySelectorAll(".lt")) {
        const text = lt.textContent;
        if (!q || lt.parentNode.hidden || !text.toLowerCase().includes(q)) {
          if (lt.childElementCount) lt.textContent = text;
          continue;
        }
        const parts = [];
        let at = 0;
        const low = text.toLowerCase();
        for (let i = low.indexOf(q); i >= 0; i = low.indexOf(q, i + q.length)) {
          parts.push(text.slice(at, i), el("mark", { class: "hit" }, text.slice(i, i + q.length)));
          at = i + q.length;
        }
        parts.push(text.slice(at));
        lt.replaceChildren(...parts);
      }
      this.current = -1;
      this.step(0, index);
    }

    step(delta, index = null) {
      const hits = this.lines.querySelectorAll("mark.hit");
      if (!hits.length) {
        this.count.textContent = this.query ? "no match" : "";
        this.current = -1;
        return;
      }
      const from = index !== null ? index : this.current + delta;
      this.current = ((from % hits.length) + hits.length) % hits.length;
      hits.forEach((h, i) => h.classList.toggle("current", i === this.current));
      this.count.textContent = `${this.current + 1} of ${hits.length}`;
      const hit = hits[this.current];
      const box = this.lines;
      const top = hit.offsetTop - box.offsetTop;
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 20) {
        box.scrollTop = Math.max(0, top - box.clientHeight / 2);
      }
    }

    follow() {
      if (this.timer || !this.following || !this.writing) return;
      const tick = async () => {
        this.timer = null;
        if (!this.node.isConnected || !this.following) return;
        try {
          if (!document.hidden) {
            const chunk = await api(`${this.base}/chunk?offset=${this.offset}&max_bytes=${CHUNK}`);
            this.append(chunk);
            this.writing = chunk.writing;
            if (!chunk.writing && chunk.next_offset >= chunk.size) {
              this.followBox.checked = false;
              this.followBox.disabled = true;
              this.following = false;
              return;
            }
          }
        } catch (_) { /* the next tick tries again */ }
        this.timer = setTimeout(tick, FOLLOW_MS);
      };
      this.timer = setTimeout(tick, FOLLOW_MS);
    }
  }

  /** The viewer of one try's log: ``path`` is the task instance's API path (tiPath). */
  function mount(path, tryNumber) {
    const v = new Viewer(`${path}/logs/${tryNumber}`);
    v.followBox.addEventListener("change", () => { v.followBox.dataset.touched = "1"; });
    v.load();
    return v.node;
  }

  return { mount, levelOf };
})();
