// A wide table on a phone: each body cell carries its column's heading as `data-label`,
// and under 40rem the stylesheet draws each row as a card of labelled lines (the label
// over its value), so no column hides behind a sideways scroll and a row's actions stay on
// screen. Done once over a signed-in page's markup (`appPage`), so every table gets it and
// no template can forget it.
//
// The markup is ours, made by the `html` tag: tables are never nested, a heading's text is
// already escaped (no `"` or `<` in it), so it goes into the attribute as it is.

const TABLE = /(<table\b[^>]*>)([\s\S]*?)(<\/table>)/g;
const HEAD = /<thead\b[^>]*>([\s\S]*?)<\/thead>/;
const ROW = /<tr\b[^>]*>([\s\S]*?)<\/tr>/g;
const CELL_OPEN = /<(td|th)\b([^>]*)>/g;

const spanOf = (attributes: string) => Number(/\bcolspan="(\d+)"/.exec(attributes)?.[1] ?? 1);

/** The text of a heading's markup: tags dropped (an sr-only span's words kept), spaces folded. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

/** The headings of the table's last header row, one per column (a heading spanning two repeated). */
function headingsOf(head: string): string[] {
  const rows = [...head.matchAll(ROW)];
  const last = rows[rows.length - 1]?.[1] ?? "";
  const labels: string[] = [];
  for (const th of last.matchAll(/<th\b([^>]*)>([\s\S]*?)<\/th>/g)) {
    for (let k = 0; k < spanOf(th[1] ?? ""); k++) labels.push(textOf(th[2] ?? ""));
  }
  return labels;
}

function labelRow(row: string, labels: readonly string[]): string {
  let column = 0;
  return row.replace(CELL_OPEN, (cell, tag: string, attributes: string) => {
    const span = spanOf(attributes);
    const label = labels[column] ?? "";
    column += span;
    // A cell across columns (a list's "nothing here" row) or under an empty heading is no labelled line.
    if (span > 1 || label === "" || attributes.includes("data-label=")) return cell;
    return `<${tag}${attributes} data-label="${label}">`;
  });
}

/** The page's markup with every body cell of every table with a header labelled by its column. */
export function labelTableCells(markup: string): string {
  return markup.replace(TABLE, (whole, open: string, inner: string, close: string) => {
    const head = HEAD.exec(inner);
    if (!head) return whole;
    const labels = headingsOf(head[1] ?? "");
    const start = (head.index ?? 0) + head[0].length;
    const body = inner.slice(start).replace(ROW, (row) => labelRow(row, labels));
    return `${open}${inner.slice(0, start)}${body}${close}`;
  });
}
