import assert from "node:assert/strict";
import { test } from "node:test";
import { html, raw } from "./html.js";

test("every interpolation is escaped, in text and in quoted attributes", () => {
  const name = `<script>alert('x')</script>" onmouseover="y" &amp;`;
  const page = html`<p title="${name}">${name}</p>`;
  assert.equal(
    page.markup,
    '<p title="&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot; onmouseover=&quot;y&quot; &amp;amp;">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot; onmouseover=&quot;y&quot; &amp;amp;</p>',
  );
});

test("templates nest unescaped; lists join; null, undefined and false render nothing; raw() is the named exception", () => {
  const items = ["a<b", "c"].map((t) => html`<li>${t}</li>`);
  assert.equal(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.markup, "<ul><li>a&lt;b</li><li>c</li></ul>0");
  assert.equal(html`${raw("<hr>")}${"<hr>"}`.markup, "<hr>&lt;hr&gt;");
});
