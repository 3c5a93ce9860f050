/* statewright web UI: task groups in the grid. Each time the grid is drawn ("grid:drawn"), the
   rows of a group's tasks are put together under a row for the group, which shows the group's
   state per run and folds or unfolds on a click. Folded groups are remembered per DAG for the
   browser session. Values from the DAG are set as text, never as HTML. */
"use strict";

(() => {
  const storeKey = (dagId) => `statewright.grid.folded.${dagId}`;

  function folded(dagId) {
    try { return new Set(JSON.parse(sessionStorage.getItem(storeKey(dagId)) || "[]")); }
    catch (_) { return new Set(); }
  }

  function saveFolded(dagId, set) {
    try { sessionStorage.setItem(storeKey(dagId), JSON.stringify([...set])); } catch (_) { /* private mode */ }
  }

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  /* The tree of groups and tasks in the grid's row order: a group comes where its first task is. */
  function buildTree(grid) {
    const info = new Map(grid.task_groups.map((g) => [g.group_id, g]));
    const root = { children: [], groups: new Map() };
    const groupNode = (groupId) => {
      const g = info.get(groupId);
      const parent = g && g.parent && info.has(g.parent) ? groupNode(g.parent) : root;
      if (!parent.groups.has(groupId)) {
        const n = { group: g, children: [], groups: new Map() };
        parent.groups.set(groupId, n);
        parent.children.push(n);
      }
      return parent.groups.get(groupId);
    };
    for (const row of grid.rows) {
      const parent = row.task_group && info.has(row.task_group) ? groupNode(row.task_group) : root;
      parent.children.push({ row });
    }
    return root;
  }

  function groupRow(g, depth, isFolded, runs, onToggle) {
    const tr = node("tr", "group-row");
    tr.dataset.groupId = g.group_id;
    const th = node("th", "task group");
    th.style.setProperty("--depth", String(depth));
    const button = node("button", "group-toggle", isFolded ? "▸" : "▾");
    button.type = "button";
    button.setAttribute("aria-expanded", isFolded ? "false" : "true");
    button.setAttribute("aria-label", `${isFolded ? "Unfold" : "Fold"} task group ${g.group_id}`);
    button.addEventListener("click", onToggle);
    th.append(button, node("span", "group-label", g.label));
    th.title = g.group_id + (g.tooltip ? `\n${g.tooltip}` : "");
    tr.append(th);
    g.instances.forEach((c, i) => {
      const td = node("td");
      if (!c) { td.append(node("span", "cell empty")); tr.append(td); return; }
      const cell = node("span", `cell group-cell s-${c.state}`);
      cell.dataset.state = c.state;
      const counts = Object.entries(c.counts).map(([s, n]) => `${n} ${s}`).join(", ");
      cell.title = `${g.group_id} · ${runs[i] ? runs[i].dag_run_id : ""}\n${c.state}: ${counts}`;
      td.append(cell);
      tr.append(td);
    });
    return tr;
  }

  /* Inside its group a task shows its own id (the full id stays in the title). */
  function shortenLabel(th, row) {
    const prefix = row.task_group ? row.task_group + "." : "";
    const first = th.firstChild;
    if (!prefix || !row.task_id.startsWith(prefix) || !first || first.nodeType !== Node.TEXT_NODE
        || first.textContent !== row.task_id) return;
    first.textContent = row.task_id.slice(prefix.length);
  }

  function arrange(table, grid, dagId) {
    if (!grid.task_groups || !grid.task_groups.length) return;
    const tbody = table.querySelector("tbody");
    // A task's row and the rows of its map indexes after it (which share its data-task-id)
    // move together: one block per task.
    const trOf = new Map();
    let block = null;
    for (const tr of tbody.querySelectorAll(":scope > tr")) {
      if (tr.classList.contains("group-row")) { block = null; continue; }
      if (tr.classList.contains("mapped-index")) { if (block) block.push(tr); continue; }
      const th = tr.querySelector("th.task");
      block = th && th.dataset.taskId ? [tr] : null;
      if (block) trOf.set(th.dataset.taskId, block);
    }
    const foldedSet = folded(dagId);
    const ordered = [];
    const walk = (n, depth, hidden) => {
      for (const child of n.children) {
        if (child.row) {
          const rows = trOf.get(child.row.task_id);
          if (!rows) continue;
          for (const tr of rows) {
            tr.hidden = hidden;
            tr.querySelector("th.task").style.setProperty("--depth", String(depth));
            tr.classList.toggle("in-group", depth > 0);
          }
          shortenLabel(rows[0].querySelector("th.task"), child.row);
          ordered.push(...rows);
          continue;
        }
        const id = child.group.group_id;
        const isFolded = foldedSet.has(id);
        const tr = groupRow(child.group, depth, isFolded, grid.dag_runs, () => {
          if (foldedSet.has(id)) foldedSet.delete(id); else foldedSet.add(id);
          saveFolded(dagId, foldedSet);
          arrange(table, grid, dagId);
        });
        tr.hidden = hidden;
        ordered.push(tr);
        walk(child, depth + 1, hidden || isFolded);
      }
    };
    walk(buildTree(grid), 0, false);
    for (const old of tbody.querySelectorAll("tr.group-row")) old.remove();
    tbody.append(...ordered);
  }

  document.addEventListener("grid:drawn", (event) => {
    const { grid, dagId } = event.detail;
    const table = document.querySelector("#grid table.grid");
    if (table) arrange(table, grid, dagId);
  });
})();
