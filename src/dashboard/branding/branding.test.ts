// Configure › Branding: the accent and the logo set, refused (poor contrast, a type or
// size the pages do not serve), and the usual guards (form token, another site, another
// workspace's owner), on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const SVG = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

/** A browser's multipart upload of one file with the form's token. */
function upload(browser: TestBrowser, url: string, file: { bytes: Buffer; name: string; type: string }, headers: Record<string, string> = {}) {
  const boundary = "----wardenTestBoundary7MA4YWxkTrZu0gW";
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${browser.csrf}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="logo"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return browser.app.inject({
    method: "POST",
    url,
    payload,
    remoteAddress: browser.remoteAddress,
    headers: {
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "sec-fetch-site": "same-origin",
      cookie: [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; "),
      ...headers,
    },
  });
}

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedWorkspace(env.services);
  const owner = new TestBrowser(app);
  await owner.signIn(env.dataDir, ws.ownerEmail);
  const page = `/dashboard/w/${ws.slug}/test/branding`;
  await owner.get(page);
  return { env, app, ws, owner, page };
}

for (const dialect of DIALECTS) {
  describe(`dashboard branding (${dialect})`, () => {
    test("an accent and a logo are saved, shown, audited; the logo is removed again", async () => {
      const { env, ws, owner, page } = await setUp(dialect);
      const fresh = await owner.get(page);
      assert.equal(fresh.statusCode, 200);
      assert.match(fresh.body, /Warden's blue \(none set\)/);
      assert.match(fresh.body, /<rect x="16" y="94" width="120" height="40" rx="6" fill="#3b5bdb"\/>/, "the preview's button in Warden's blue");
      assert.match(fresh.body, /aria-current="page">Branding</);

      const saved = await owner.post(`${page}/accent`, { accent: "#1F6F43" });
      assert.equal(saved.statusCode, 303);
      const shown = await owner.get(saved.headers.location as string);
      assert.match(shown.body, /The accent colour is saved/);
      assert.match(shown.body, /<rect width="28" height="28" rx="6" fill="#1f6f43"\/>/, "normalised, shown as a swatch without inline style");
      assert.match(shown.body, /<rect x="16" y="94" width="120" height="40" rx="6" fill="#1f6f43"\/>/, "the preview's button in the saved accent");
      assert.match(shown.body, /<text x="16" y="74" font-size="13" fill="#1f6f43"/, "and its link");

      const uploaded = await upload(owner, `${page}/logo`, { bytes: PNG, name: "logo.png", type: "image/png" });
      assert.equal(uploaded.statusCode, 303, uploaded.body);
      const withLogo = await owner.get(page);
      const src = /<img src="([^"]+)" alt="Your current logo"/.exec(withLogo.body)?.[1] ?? "";
      assert.match(src, new RegExp(`^/c/${ws.slug}/logo\\?v=\\d+$`));
      assert.match(withLogo.body, /fill="#1f6f43"/, "the accent is kept when the logo changes");
      assert.match(withLogo.body, new RegExp(`<image href="/c/${ws.slug}/logo\\?v=\\d+" x="14"`), "the preview shows the logo");

      const removed = await owner.post(`${page}/logo/remove`);
      assert.equal(removed.statusCode, 303);
      assert.match((await owner.get(page)).body, /No logo: your pages show the workspace's name alone/);

      const audit = await env.services.db
        .selectFrom("audit_log")
        .select(["action", "subject"])
        .where("workspace_id", "=", ws.workspaceId)
        .where("action", "=", "workspace.branding_changed")
        .execute();
      // The test's clock stands still: the three entries share their time.
      assert.deepEqual(audit.map((a) => a.subject).sort(), ["accent", "logo", "logo"]);
    });

    test("refusals say why and change nothing: poor contrast, not a colour, SVG, another type, too big, no file", async () => {
      const { owner, page } = await setUp(dialect);
      const pale = await owner.post(`${page}/accent`, { accent: "#ffd43b" });
      assert.equal(pale.statusCode, 400);
      assert.match(pale.body, /White text on #ffd43b has a contrast of 1\.\d\d:1, under the 4\.5:1/);
      assert.match(pale.body, /id="accent"[^>]*value="#ffd43b" aria-invalid="true" aria-describedby="accent-error"/, "tied to its field, what was typed kept");
      assert.equal((await owner.post(`${page}/accent`, { accent: "blue" })).statusCode, 400);
      // Just either side of the bar: #777777 is 4.48:1, #767676 4.54:1.
      assert.match((await owner.post(`${page}/accent`, { accent: "#777" })).body, /White text on #777777 has a contrast of 4\.48:1/);

      const svg = await upload(owner, `${page}/logo`, { bytes: SVG, name: "logo.png", type: "image/png" });
      assert.equal(svg.statusCode, 400);
      assert.match(svg.body, /SVG logos are refused: an SVG can carry script/, "recognised by its bytes, whatever its name and type say");
      const gif = await upload(owner, `${page}/logo`, { bytes: Buffer.from("GIF89a........"), name: "logo.gif", type: "image/gif" });
      assert.match(gif.body, /The logo must be a PNG, JPEG or WebP image\./);
      const big = await upload(owner, `${page}/logo`, { bytes: Buffer.concat([PNG, Buffer.alloc(300 * 1024)]), name: "big.png", type: "image/png" });
      assert.equal(big.statusCode, 400);
      assert.match(big.body, /The logo is 301 KiB; it may be 256 KiB at most\./);
      const empty = await upload(owner, `${page}/logo`, { bytes: Buffer.alloc(0), name: "", type: "application/octet-stream" });
      assert.match(empty.body, /Choose an image file for the logo\./);

      assert.match((await owner.get(page)).body, /Warden's blue \(none set\)[\s\S]*No logo/, "nothing was stored");
    });

    test("a form without its token, from another site, or for another owner's workspace is refused", async () => {
      const { env, app, ws, owner, page } = await setUp(dialect);
      const noToken = await owner.post(`${page}/accent`, { accent: "#1f6f43", _csrf: "" });
      assert.equal(noToken.statusCode, 403);
      assert.equal((await owner.post(`${page}/accent`, { accent: "#1f6f43" }, { "sec-fetch-site": "cross-site" })).statusCode, 403);
      assert.equal((await owner.post(`${page}/accent`, { accent: "#1f6f43" }, { "sec-fetch-site": "", origin: "https://evil.example" })).statusCode, 403);
      const crossUpload = await upload(owner, `${page}/logo`, { bytes: PNG, name: "logo.png", type: "image/png" }, { "sec-fetch-site": "cross-site" });
      assert.equal(crossUpload.statusCode, 403);
      const forged = await upload({ ...owner, csrf: "0".repeat(64) } as TestBrowser, `${page}/logo`, { bytes: PNG, name: "logo.png", type: "image/png" });
      assert.equal(forged.statusCode, 403);

      const other = await seedWorkspace(env.services);
      const stranger = new TestBrowser(app);
      await stranger.signIn(env.dataDir, other.ownerEmail);
      await stranger.get(`/dashboard/w/${other.slug}/test/branding`);
      assert.equal((await stranger.get(page)).statusCode, 404);
      assert.equal((await stranger.post(`${page}/accent`, { accent: "#1f6f43" })).statusCode, 404);
      assert.match((await owner.get(page)).body, /Warden's blue \(none set\)[\s\S]*No logo/);
      assert.ok(ws.slug !== other.slug);
    });
  });
}
