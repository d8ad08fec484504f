import assert from "node:assert/strict";
import { test } from "node:test";
// No database: the labelling is a pure function of a page's markup.
import { labelTableCells } from "./tables.js";

test("each body cell gets its column's heading as data-label, row headings and actions included", () => {
  const page = `<p>Before</p><table>
<thead><tr><th>Plan <span class="muted">· licence</span></th><th class="num">Amount</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody><tr><th scope="row">Lifetime</th><td class="num">€49.00</td><td class="actions"><form><button>Refund…</button></form></td></tr>
<tr><td>Monthly</td><td class="num">€5.00</td><td class="actions"></td></tr></tbody>
</table>`;
  assert.equal(
    labelTableCells(page),
    `<p>Before</p><table>
<thead><tr><th>Plan <span class="muted">· licence</span></th><th class="num">Amount</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody><tr><th scope="row" data-label="Plan · licence">Lifetime</th><td class="num" data-label="Amount">€49.00</td><td class="actions" data-label="Actions"><form><button>Refund…</button></form></td></tr>
<tr><td data-label="Plan · licence">Monthly</td><td class="num" data-label="Amount">€5.00</td><td class="actions" data-label="Actions"></td></tr></tbody>
</table>`,
  );
});

test("a heading's escaped text stays escaped in the attribute; a cell across columns, or under an empty heading, gets none", () => {
  const page = `<table><thead><tr><th>Who &amp; &quot;why&quot;</th><th></th><th colspan="2">When</th></tr></thead>
<tbody><tr><td>a</td><td>b</td><td>c</td><td>d</td></tr><tr><td colspan="4">Nothing yet</td></tr></tbody></table>`;
  assert.equal(
    labelTableCells(page),
    `<table><thead><tr><th>Who &amp; &quot;why&quot;</th><th></th><th colspan="2">When</th></tr></thead>
<tbody><tr><td data-label="Who &amp; &quot;why&quot;">a</td><td>b</td><td data-label="When">c</td><td data-label="When">d</td></tr><tr><td colspan="4">Nothing yet</td></tr></tbody></table>`,
  );
});

test("a table without a header row, and markup without tables, are left as they are", () => {
  const plain = `<table><tr><td>a</td></tr></table><dl><dt>x</dt><dd>y</dd></dl>`;
  assert.equal(labelTableCells(plain), plain);
  assert.equal(labelTableCells("<p>no table</p>"), "<p>no table</p>");
});
