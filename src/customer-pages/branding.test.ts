// The workspace's branding as customers' browsers get it: every hosted page links the
// versioned stylesheet and shows the logo, both served from Warden's own origin with the
// right type and caching; set from the command line by the same use case as the
// dashboard's Configure › Branding, with the same refusals. Both engines.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runWarden, wardenJson } from "../test-support/cli.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, privateDatabaseEnv, seedWorkspace, unique } from "../test-support/harness.js";
import { brandStylesheet, contrastRatio, updateBranding } from "./branding.service.js";

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 7)]);
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WEBPVP8 "), Buffer.alloc(16)]);

for (const dialect of DIALECTS) {
  describe(`hosted pages: branding (${dialect})`, () => {
    test("pages link the accent's stylesheet and show the logo, each by a versioned address kept for a year; a new version changes both", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      const plain = await browser.get(`${pagesOf(ws)}/plans`);
      assert.doesNotMatch(plain.body, /brand\.css|customer-logo/, "no branding: Warden's colours and the name's first letter");
      assert.doesNotMatch(plain.body, /rel="icon"/, "no logo, no icon: Warden's mark is the dashboard's, not the vendor's");
      assert.match(plain.body, /<span class="brand-mark" aria-hidden="true">T<\/span> Test workspace/);

      const first = await updateBranding(env.services, { workspace: ws.slug, accent: "#1f6f43", logo: PNG });
      for (const page of ["plans", "trial", "sign-in"]) {
        const body = (await browser.get(`${pagesOf(ws)}/${page}`)).body;
        assert.ok(body.includes(`<link rel="stylesheet" href="/c/${ws.slug}/brand.css?v=${first.version}">`), page);
        assert.ok(body.includes(`<img class="customer-logo" src="/c/${ws.slug}/logo?v=${first.version}" alt="" height="32"> Test workspace`), page);
        assert.ok(body.includes(`<link rel="icon" href="/c/${ws.slug}/logo?v=${first.version}">`), `${page}: the logo is the tab's icon`);
      }

      const css = await browser.get(`/c/${ws.slug}/brand.css?v=${first.version}`);
      assert.equal(css.statusCode, 200);
      assert.equal(css.headers["content-type"], "text/css; charset=utf-8");
      assert.equal(css.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.match(css.body, /--brand: #1f6f43;/);
      const logo = await browser.get(`/c/${ws.slug}/logo?v=${first.version}`);
      assert.equal(logo.statusCode, 200);
      assert.equal(logo.headers["content-type"], "image/png");
      assert.equal(logo.headers["x-content-type-options"], "nosniff");
      assert.equal(logo.headers["content-security-policy"], "default-src 'none'");
      assert.deepEqual(logo.rawPayload, PNG);

      const second = await updateBranding(env.services, { workspace: ws.slug, logo: WEBP });
      assert.ok(second.version > first.version, "a change is a new version even when the clock stands still");
      assert.equal((await browser.get(`/c/${ws.slug}/logo?v=${second.version}`)).headers["content-type"], "image/webp");
      const stale = await browser.get(`/c/${ws.slug}/brand.css?v=${first.version}`);
      assert.equal(stale.headers["cache-control"], "no-cache", "an old version's address answers the current branding, not to be kept");
      assert.match(stale.body, /--brand: #1f6f43;/);

      await updateBranding(env.services, { workspace: ws.slug, logo: null, accent: "" });
      assert.equal((await browser.get(`/c/${ws.slug}/logo`)).statusCode, 404);
      assert.equal((await browser.get(`/c/nobody-here/brand.css`)).statusCode, 404);
      assert.doesNotMatch((await browser.get(`${pagesOf(ws)}/plans`)).body, /customer-logo/);
    });

    test("warden admin workspace update sets the same branding, with the same refusals; warden admin names set a name in a language", async () => {
      const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: "branding-cli-test-key-0123456789abcdef" };
      const owner = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", owner);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", owner);
      const dir = await mkdtemp(join(tmpdir(), "warden-logo-"));
      const file = join(dir, "logo.png");
      await writeFile(file, PNG);
      const set = await wardenJson<{ accent: string; logo_type: string; language: string }>(
        env,
        "admin",
        "workspace",
        "update",
        "--workspace",
        slug,
        "--accent",
        "#1F6F43",
        "--logo",
        file,
        "--language",
        "pt-br",
      );
      assert.equal(set.accent, "#1f6f43");
      assert.equal(set.logo_type, "image/png");
      assert.equal(set.language, "pt-BR");
      const klingon = await runWarden(env, "admin", "workspace", "update", "--workspace", slug, "--language", "tlh");
      assert.notEqual(klingon.code, 0);
      assert.match(klingon.stderr, /The language must be one of en, de, fr/);
      // A tool's name in German, by the use case of Configure's names page; an empty one removes it.
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      const named = await wardenJson<{ default_name: string; names: Record<string, string> }>(
        env,
        "admin",
        "names",
        "set",
        "--workspace",
        slug,
        "--tool",
        "tabs",
        "--language",
        "de",
        "--name",
        "Reiter",
      );
      assert.deepEqual(named, { default_name: "Tabs", names: { de: "Reiter" } });
      const unnamed = await wardenJson<{ names: Record<string, string> }>(
        env,
        "admin",
        "names",
        "set",
        "--workspace",
        slug,
        "--tool",
        "tabs",
        "--language",
        "de",
        "--name",
        "",
      );
      assert.deepEqual(unnamed.names, {});
      const noPlan = await runWarden(env, "admin", "names", "set", "--workspace", slug, "--tool", "tabs", "--plan", "none", "--language", "de", "--name", "X");
      assert.notEqual(noPlan.code, 0);
      const pale = await runWarden(env, "admin", "workspace", "update", "--workspace", slug, "--accent", "#ffd43b");
      assert.notEqual(pale.code, 0);
      assert.match(pale.stderr, /White text on #ffd43b has a contrast of 1\.\d\d:1, under the 4\.5:1/);
      await writeFile(file, "<svg xmlns='http://www.w3.org/2000/svg'/>");
      const svg = await runWarden(env, "admin", "workspace", "update", "--workspace", slug, "--logo", file);
      assert.notEqual(svg.code, 0);
      assert.match(svg.stderr, /SVG logos are refused/);
      const missing = await runWarden(env, "admin", "workspace", "update", "--workspace", slug, "--logo", join(dir, "nothing.png"));
      assert.match(missing.stderr, /Cannot read the file/);
      await rm(dir, { recursive: true, force: true });
    });

    test("the accent's tint for highlighted rows still reads at 4.5:1, and a hovered button only darkens", () => {
      // The ratio the checks below rely on, against figures known by hand (WCAG's own): black on white, and the grey that just passes.
      assert.equal(contrastRatio("#000000", "#ffffff"), 21);
      assert.equal(contrastRatio("#767676", "#ffffff").toFixed(2), "4.54");
      assert.equal(contrastRatio("#777777", "#ffffff").toFixed(2), "4.48");
      for (const accent of ["#1f6f43", "#3b5bdb", "#c2410c", "#000000", "#767676"]) {
        const css = brandStylesheet({ accent, logoType: null, version: 1, language: null });
        const soft = /--brand-soft: (#[0-9a-f]{6})/.exec(css)?.[1] as string;
        const hover = /background: (#[0-9a-f]{6})/.exec(css)?.[1] as string;
        assert.ok(contrastRatio(accent, soft) >= 4.5, `${accent} on ${soft}`);
        assert.ok(contrastRatio(hover, "#ffffff") >= contrastRatio(accent, "#ffffff"), `${hover} darker than ${accent}`);
      }
    });
  });
}
