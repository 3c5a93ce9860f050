/* statewright web UI: the DAG page's Calendar tab (address: #calendar), a year of the DAG's runs
   as Airflow 3's calendar draws it: one square per day (UTC), a column per week, Monday on
   top. A day's square is split top to bottom into its runs' states, each part as tall as its
   share of the day's runs (failed first); days the schedule still plans are outlined. Hovering
   a day tells its counts; clicking it lists its runs (from /api/v2's run list), each linking
   to its run page. Read from GET /api/v1/dags/{dag_id}/calendar. An SVG drawn with attributes
   and classes only: nothing here needs a style attribute, which the page's CSP refuses. */
"use strict";

window.statewrightCalendar = (() => {
  const tab = window.statewrightViewTab.find("calendar-wrap", "view-calendar");
  if (!tab) return null;
  const { wrap, button, dagId } = tab;
  const SVG = "http://www.w3.org/2000/svg";
  const CELL = 14;
  const GAP = 3;
  const LEFT = 34;
  const TOP = 20;
  const ORDER = ["failed", "running", "queued", "paused", "cancelled", "success", "planned"];
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const box = document.getElementById("calendar-chart");
  const yearLabel = document.getElementById("calendar-year");
  const summary = document.getElementById("calendar-summary");
  const dayBox = document.getElementById("calendar-day");
  const tip = el("div", { class: "cal-tip", role: "tooltip", hidden: true });
  const views = [document.querySelector(".grid-layout"), document.getElementById("legend")];
  const granularity = document.getElementById("calendar-granularity");
  const state = { year: new Date().getUTCFullYear(), month: new Date().getUTCMonth(),
    mode: "daily", days: new Map(), selected: null, focus: null, loading: 0 };
  const hourly = () => state.mode === "hourly";

  const dayKey = (d) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const hourKey = (d) => `${dayKey(d)}T${pad(d.getUTCHours())}`;
  /** A cell's key (a day "2025-03-03" or an hour "2025-03-03T05") as its start, epoch ms. */
  const startOf = (key) => Date.parse(key.length > 10 ? `${key}:00:00Z` : `${key}T00:00:00Z`);
  const monthKey = () => `${state.year}-${pad(state.month + 1)}`;
  const svg = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  };
  const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);
  const words = (counts) => ORDER.filter((s) => counts[s]).map((s) => `${counts[s]} ${s}`)
    .join(", ");

  /** Where a day sits: its week's column and its weekday's row (Monday 0). */
  function place(date) {
    const jan1 = Date.UTC(date.getUTCFullYear(), 0, 1);
    const first = (new Date(jan1).getUTCDay() + 6) % 7;
    const n = Math.round((date.getTime() - jan1) / 86400000);
    return { col: Math.floor((n + first) / 7), row: (n + first) % 7 };
  }

  /** The parts of a day's square: [state, y offset, height], failed on top. */
  function parts(counts) {
    const n = total(counts);
    const out = [];
    let y = 0;
    for (const s of ORDER) {
      if (!counts[s]) continue;
      const h = (CELL * counts[s]) / n;
      out.push([s, y, h]);
      y += h;
    }
    return out;
  }

  function dayCell(date) {
    const { col, row } = place(date);
    return cell(dayKey(date), LEFT + col * (CELL + GAP), TOP + row * (CELL + GAP));
  }

  /** A day's (or hour's) square at (x, y), split by its runs' states. */
  function cell(key, x, y) {
    const counts = state.days.get(key) || {};
    const g = svg("g", { class: "cal-day", "data-date": key, role: "button",
      tabindex: key === state.focus ? 0 : -1, "aria-label": `${key}: ${words(counts) || "no runs"}`,
      transform: `translate(${x},${y})` });
    g.append(svg("rect", { class: "cal-empty", width: CELL, height: CELL, rx: 2 }));
    for (const [s, y, h] of parts(counts)) {
      g.append(svg("rect", { class: `cal-part s-${s}`, "data-state": s, y, width: CELL, height: h }));
    }
    if (total(counts)) g.classList.add("cal-has-runs");
    if (key === state.selected) g.classList.add("cal-selected");
    return g;
  }

  function labels(root) {
    for (let m = 0; m < 12; m += 1) {
      const { col } = place(new Date(Date.UTC(state.year, m, 1)));
      const t = svg("text", { class: "cal-label", x: LEFT + col * (CELL + GAP), y: TOP - 6 });
      t.textContent = MONTHS[m];
      root.append(t);
    }
    for (const [row, name] of [[0, "Mon"], [2, "Wed"], [4, "Fri"], [6, "Sun"]]) {
      const t = svg("text", { class: "cal-label", x: 0, y: TOP + row * (CELL + GAP) + CELL - 3 });
      t.textContent = name;
      root.append(t);
    }
  }

  function drawYear() {
    const last = place(new Date(Date.UTC(state.year, 11, 31)));
    const root = svg("svg", { class: "cal-year", role: "img",
      width: LEFT + (last.col + 1) * (CELL + GAP), height: TOP + 7 * (CELL + GAP),
      "aria-label": `Runs of ${dagId} in ${state.year}, one square a day` });
    labels(root);
    for (let d = new Date(Date.UTC(state.year, 0, 1)); d.getUTCFullYear() === state.year;
      d = new Date(d.getTime() + 86400000)) {
      root.append(dayCell(d));
    }
    return root;
  }

  /** A month, hour by hour: a row per day, a column per hour (UTC). */
  function drawMonth() {
    const days = new Date(Date.UTC(state.year, state.month + 1, 0)).getUTCDate();
    const root = svg("svg", { class: "cal-year cal-month", role: "img",
      width: LEFT + 24 * (CELL + GAP), height: TOP + days * (CELL + GAP),
      "aria-label": `Runs of ${dagId} in ${MONTHS[state.month]} ${state.year}, one square an hour` });
    for (let h = 0; h < 24; h += 3) {
      const t = svg("text", { class: "cal-label", x: LEFT + h * (CELL + GAP), y: TOP - 6 });
      t.textContent = `${pad(h)}h`;
      root.append(t);
    }
    for (let d = 1; d <= days; d += 1) {
      const y = TOP + (d - 1) * (CELL + GAP);
      const t = svg("text", { class: "cal-label", x: 0, y: y + CELL - 3 });
      t.textContent = String(d);
      root.append(t);
      for (let h = 0; h < 24; h += 1) {
        root.append(cell(`${monthKey()}-${pad(d)}T${pad(h)}`, LEFT + h * (CELL + GAP), y));
      }
    }
    return root;
  }

  function draw() {
    const prefix = hourly() ? `${monthKey()}-` : `${state.year}-`;
    const withRuns = [...state.days.keys()].sort()[0];
    state.focus = state.selected && state.selected.startsWith(prefix) && state.selected.length ===
      (hourly() ? 13 : 10) ? state.selected : withRuns || (hourly() ? `${prefix}01T00` : `${prefix}01-01`);
    box.replaceChildren(hourly() ? drawMonth() : drawYear(), tip);
    const period = hourly() ? `${MONTHS[state.month]} ${state.year}` : String(state.year);
    yearLabel.textContent = period;
    const all = {};
    for (const counts of state.days.values()) {
      for (const [s, n] of Object.entries(counts)) all[s] = (all[s] || 0) + n;
    }
    const runs = total(all) - (all.planned || 0);
    summary.textContent = `${runs} run${runs === 1 ? "" : "s"} in ${period}` +
      (total(all) ? ` · ${words(all)}` : "") + ` · ${hourly() ? "hours" : "days"} in UTC`;
  }

  async function load() {
    const ticket = ++state.loading;
    const from = hourly() ? new Date(Date.UTC(state.year, state.month, 1))
      : new Date(Date.UTC(state.year, 0, 1));
    const to = hourly() ? new Date(Date.UTC(state.year, state.month + 1, 1))
      : new Date(Date.UTC(state.year + 1, 0, 1));
    const q = `logical_date_gte=${enc(from.toISOString())}&logical_date_lt=${enc(to.toISOString())}` +
      `&granularity=${state.mode}`;
    let body;
    try {
      body = await api(`/dags/${enc(dagId)}/calendar?${q}`);
    } catch (e) {
      toast(e.message, { error: true });
      return;
    }
    if (ticket !== state.loading) return; // a newer year was asked for meanwhile
    history.replaceState(null, "", `${location.pathname}${location.search}#calendar/` +
      (hourly() ? monthKey() : String(state.year)));
    granularity.value = state.mode;
    state.days = new Map();
    for (const e of body.dag_runs) {
      const key = e.date.slice(0, hourly() ? 13 : 10);
      const counts = state.days.get(key) || {};
      counts[e.state] = (counts[e.state] || 0) + e.count;
      state.days.set(key, counts);
    }
    draw();
  }

  function showTip(g) {
    const key = g.dataset.date;
    const counts = state.days.get(key) || {};
    tip.textContent = `${key}: ${total(counts) ? words(counts) : "no runs"}`;
    tip.hidden = false;
    const at = g.getBoundingClientRect();
    const base = box.getBoundingClientRect();
    tip.style.setProperty("left", `${at.left - base.left + CELL + 6}px`);
    tip.style.setProperty("top", `${at.top - base.top - 4}px`);
  }

  async function pick(key) {
    state.selected = key;
    for (const g of box.querySelectorAll(".cal-day")) {
      g.classList.toggle("cal-selected", g.dataset.date === key);
      g.setAttribute("tabindex", g.dataset.date === key ? "0" : "-1");
    }
    const counts = state.days.get(key) || {};
    const isHour = key.length > 10;
    const head = el("h3", { class: "cal-day-head",
      text: isHour ? `${key.replace("T", " ")}:00 (UTC)` : `${key} (UTC)` });
    const done = total(counts) - (counts.planned || 0);
    if (!done) {
      dayBox.replaceChildren(head, el("p", { class: "muted",
        text: counts.planned ? `${counts.planned} run${counts.planned === 1 ? "" : "s"} planned by the schedule.` : `No runs this ${isHour ? "hour" : "day"}.` }));
      return;
    }
    dayBox.replaceChildren(head, el("p", { class: "muted", text: "Loading…" }));
    const start = startOf(key);
    const end = new Date(start + (isHour ? 3600000 : 86400000)).toISOString();
    const q = `logical_date_gte=${enc(new Date(start).toISOString())}&logical_date_lt=${enc(end)}` +
      "&order_by=logical_date&limit=100";
    try {
      const res = await fetch(`/api/v2/dags/${enc(dagId)}/dagRuns?${q}`,
        { headers: { Accept: "application/json" } });
      const body = await res.json();
      if (!res.ok) throw new Error(body.detail || `HTTP ${res.status}`);
      if (state.selected !== key) return;
      dayBox.replaceChildren(head, runList(body.dag_runs, counts));
    } catch (e) {
      dayBox.replaceChildren(head, el("p", { class: "muted", text: `${words(counts)} (${e.message})` }));
    }
  }

  function runList(runs, counts) {
    const rows = runs.map((r) => el("li", { class: "cal-run" },
      badge(r.statewright_state || r.state, r.state_name, { showType: false }), " ",
      el("a", { href: runUrl(dagId, r.dag_run_id), text: r.dag_run_id }), " ",
      el("span", { class: "muted small", text: fmtTime(r.logical_date || r.run_after) })));
    const list = el("ul", { class: "cal-runs" }, rows);
    return counts.planned
      ? el("div", {}, list, el("p", { class: "muted small", text: `and ${counts.planned} planned` }))
      : list;
  }

  function show(on) {
    window.statewrightViewTab.toggle(tab, on, views, ["details-wrap", "durations-wrap"]);
    if (on) {
      const wanted = /^#calendar\/(\d{4})(?:-(\d{2}))?$/.exec(location.hash);
      if (wanted) {
        state.year = Number(wanted[1]);
        state.mode = wanted[2] ? "hourly" : "daily";
        if (wanted[2]) state.month = Math.min(11, Math.max(0, Number(wanted[2]) - 1));
      }
      load();
    } else if (location.hash.startsWith("#calendar")) {
      history.replaceState(null, "", location.pathname + location.search);
    }
  }

  button.addEventListener("click", () => show(true));
  for (const b of document.querySelectorAll(".view-tabs button")) {
    if (b === button) continue;
    b.addEventListener("click", () => {
      if (wrap.hidden) return;
      show(false);
      if (b.id === "view-grid" || b.id === "view-graph") for (const v of views) if (v) v.hidden = false;
    });
  }
  const dayOf = (event) => event.target.closest && event.target.closest(".cal-day");
  box.addEventListener("mouseover", (event) => { const g = dayOf(event); if (g) showTip(g); });
  box.addEventListener("mouseleave", () => { tip.hidden = true; });
  box.addEventListener("click", (event) => { const g = dayOf(event); if (g) pick(g.dataset.date); });
  // one tab stop for the year (the focused day); arrows move by a day (up, down) or a week
  // (a month by the hour: a day up and down, an hour left and right)
  const STEPS = { ArrowUp: -1, ArrowDown: 1, ArrowLeft: -7, ArrowRight: 7 };
  const HOUR_STEPS = { ArrowUp: -24, ArrowDown: 24, ArrowLeft: -1, ArrowRight: 1 };
  box.addEventListener("keydown", (event) => {
    const g = dayOf(event);
    if (!g) return;
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(g.dataset.date); return; }
    if (!(event.key in STEPS)) return;
    event.preventDefault();
    const at = startOf(g.dataset.date);
    const to = hourly() ? hourKey(new Date(at + HOUR_STEPS[event.key] * 3600000))
      : dayKey(new Date(at + STEPS[event.key] * 86400000));
    const next = box.querySelector(`.cal-day[data-date="${to}"]`);
    if (!next) return;
    g.setAttribute("tabindex", "-1");
    next.setAttribute("tabindex", "0");
    next.focus();
    showTip(next);
  });
  const step = (by) => {
    if (!hourly()) state.year += by;
    else {
      const m = state.year * 12 + state.month + by;
      state.year = Math.floor(m / 12);
      state.month = m % 12;
    }
    load();
  };
  document.getElementById("calendar-prev").addEventListener("click", () => step(-1));
  document.getElementById("calendar-next").addEventListener("click", () => step(1));
  granularity.addEventListener("change", () => {
    state.mode = granularity.value === "hourly" ? "hourly" : "daily";
    if (state.selected) [state.year, state.month] = [Number(state.selected.slice(0, 4)), Number(state.selected.slice(5, 7)) - 1];
    load();
  });
  const asked = () => /^#calendar(\/\d{4}(-\d{2})?)?$/.test(location.hash);
  window.addEventListener("hashchange", () => { if (asked()) show(true); });
  if (asked()) show(true);
  return { days: () => state.days, year: () => state.year,
           setYear: (y) => { state.year = y; return load(); } };
})();
