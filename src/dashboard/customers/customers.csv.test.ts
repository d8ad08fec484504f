import assert from "node:assert/strict";
import { test } from "node:test";
import { csvCell, customersCsv } from "./customers.csv.js";

test("a cell a spreadsheet would run as a formula is made text; quotes are doubled", () => {
  assert.equal(csvCell('=HYPERLINK("http://x")@example.com'), '"\'=HYPERLINK(""http://x"")@example.com"');
  for (const lead of ["=", "+", "-", "@", "\t", "\r"]) assert.equal(csvCell(`${lead}1`), `"'${lead}1"`);
  assert.equal(csvCell("ada@example.com"), '"ada@example.com"');
  assert.equal(csvCell("a=b"), '"a=b"', "only a leading character starts a formula");
});

test("the file is its header, then one piece of text per chunk", async () => {
  async function* chunks() {
    yield [
      { email: "+1@example.com", account: true, entitled: true, via: "grant" as const, since: "2026-01-01T00:00:00.000Z", last_active_at: null, devices: 2 },
    ];
    yield [];
  }
  const pieces: string[] = [];
  for await (const piece of customersCsv(chunks())) pieces.push(piece);
  assert.deepEqual(pieces, [
    '"email","entitled","via","account","devices","last_active_at","since"\r\n',
    '"\'+1@example.com","yes","grant","yes","2","","2026-01-01T00:00:00.000Z"\r\n',
    "",
  ]);
});
