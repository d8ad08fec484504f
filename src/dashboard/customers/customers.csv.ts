// The customers export as CSV (RFC 4180: every cell quoted, CRLF between records), one
// chunk of rows at a time as the use case reads them.
import type { CustomerListItem } from "../../customers/customer.schema.js";

export const CSV_HEADER = ["email", "entitled", "via", "account", "devices", "last_active_at", "since"] as const;

/**
 * A cell as text a spreadsheet shows and never runs. An address is the buyer's to type
 * (`=HYPERLINK(…)@example.com` passes a checkout's check), and a spreadsheet runs a
 * cell that starts with = + - @ (or a tab or carriage return before one) as a formula:
 * OWASP's advice, a leading apostrophe, makes it text.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

const csvLine = (cells: readonly string[]) => `${cells.map(csvCell).join(",")}\r\n`;

function csvRow(c: CustomerListItem): string {
  return csvLine([c.email, c.entitled ? "yes" : "no", c.via ?? "", c.account ? "yes" : "no", String(c.devices), c.last_active_at ?? "", c.since]);
}

/** The file, the header first, then a piece of text per chunk of rows. */
export async function* customersCsv(chunks: AsyncIterable<CustomerListItem[]>): AsyncGenerator<string> {
  yield csvLine(CSV_HEADER);
  for await (const chunk of chunks) yield chunk.map(csvRow).join("");
}
