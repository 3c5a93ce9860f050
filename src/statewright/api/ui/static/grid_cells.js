/* statewright web UI: the grid's compact cells. The DAG page reads its grid with
   GET /api/v1/dags/{dag_id}/grid?format=compact (and the page embeds the first one so): each cell
   is an array of the values named by the grid's "cell_fields", its trailing nulls left out, its
   state an index into the grid's "states" ([state, state_name] pairs), its dates epoch
   milliseconds. decode() gives the grid back with each cell an object as the default format has
   it (dates as ISO text), so the grid, its groups, its mapped rows and the graph read it as
   before. Loaded before app.js. */
"use strict";

window.statewrightGridCells = (() => {
  const QUERY = "format=compact";
  const FIELDS = ["state", "try_number", "max_tries", "start_date", "end_date", "duration",
    "state_message", "map_count", "state_counts"];
  const iso = (ms) => (ms === null ? null : new Date(ms).toISOString());

  /** A cell as the default format has it; its dates become text only when read (the grid
      never reads them: 50,000 of them would take as long to format as the rest to decode). */
  class Cell {
    constructor(state, values) {
      [this.state, this.state_name] = state;
      [this.try_number, this.max_tries, this.start_ms, this.end_ms, this.duration,
        this.state_message, this.map_count, this.state_counts] = values;
    }

    get start_date() { return iso(this.start_ms); }

    get end_date() { return iso(this.end_ms); }
  }

  /** A function from a compact cell (or null) to a Cell (or null). */
  function cellDecoder(fields, states) {
    const at = FIELDS.map((name) => fields.indexOf(name));
    return (values) => {
      if (!values) return null;
      const value = (i) => (i >= 0 && i < values.length ? values[i] : null);
      return new Cell(states[values[at[0]]], at.slice(1).map(value));
    };
  }

  /** A row whose cells are decoded when its "instances" are first read: a big grid draws the
      cells of the rows in view only, and decoding all 25,000 took as long as drawing them. */
  function lazyRow(row, cell) {
    const { instances: packed, ...rest } = row;
    let cells = null;
    return Object.defineProperty(rest, "instances", {
      enumerable: true,
      get() { if (!cells) cells = packed.map(cell); return cells; },
    });
  }

  /** The grid with object cells; a grid already in the default format is returned as it is. */
  function decode(grid) {
    if (!grid || !grid.cell_fields) return grid;
    const cell = cellDecoder(grid.cell_fields, grid.states);
    const { cell_fields: _fields, states: _states, ...rest } = grid;
    return { ...rest, rows: grid.rows.map((row) => lazyRow(row, cell)) };
  }

  return { QUERY, decode };
})();
