import { toIso } from "../clock.js";

/** Rows under their headings, each column as wide as its widest cell, two spaces apart. */
export function formatTable(headings: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headings.map((heading, i) => Math.max(heading.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headings), ...rows.map(line)].join("\n");
}

/** A time in a table: UTC to the minute. */
export const minute = (ms: number | null) => (ms === null ? "-" : `${toIso(ms).slice(0, 16).replace("T", " ")}Z`);

/** An ISO time or null, for --json. */
export const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(ms));

/** A list's text: the table, or a sentence when there is nothing to show. */
export const listText = (empty: string, headings: string[], rows: string[][]) => (rows.length === 0 ? empty : formatTable(headings, rows));
