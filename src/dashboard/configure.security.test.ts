// Every form of the Configure section (catalogue, names in other languages, Stripe, Paddle, owners, branding) against the attacks the
// dashboard guards against: a post without the session's form token or from another
// site, an owner of another workspace, and names that are markup. Nothing may change.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { brandOf } from "../customer-pages/branding.service.js";
import { paddleStatus } from "../paddle/paddle-account.service.js";
import { paddleLinksOfEnv } from "../paddle/paddle-plan-link.service.js";
import type { Services } from "../services.js";
import { stripeStatus } from "../stripe/stripe-account.service.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../test-support/harness.js";
import { connectTestPaddle } from "../test-support/paddle.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { readSubjectNames } from "../workspaces/translated-names.service.js";
import { createBundle, createPlan, createTool, listBundles, listPlans, listTools } from "../workspaces/workspace.service.js";
import { requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { listWorkspaceOwners } from "../workspaces/workspace-owners.service.js";

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** Everything these forms could change in a workspace. */
async function snapshot(services: Services, slug: string): Promise<string> {
  const named = (kind: "product" | "plan", productKind: "tool" | "bundle", productId: string, itemId = "") =>
    readSubjectNames(services.db, { workspace: slug, subject: { kind, productKind, productId, itemId } }).then((n) => n.names);
  const [tools, plans, bundles, test, live, owners, brand, names, paddle] = await Promise.all([
    listTools(services.db, { workspace: slug }),
    listPlans(services.db, { workspace: slug }),
    listBundles(services.db, { workspace: slug }),
    stripeStatus(services, { workspace: slug, env: "test" }),
    stripeStatus(services, { workspace: slug, env: "live" }),
    listWorkspaceOwners(services, { workspace: slug }),
    requireWorkspace(services.db, slug).then((workspace) => brandOf(services, workspace)),
    Promise.all([named("product", "tool", "tabmaster"), named("plan", "tool", "tabmaster", "lifetime"), named("product", "bundle", "suite")]),
    Promise.all(
      (["test", "live"] as const).flatMap((env) => [
        paddleStatus(services, { workspace: slug, env }).then((s) => s.connection),
        paddleLinksOfEnv(services, { workspace: slug, env }),
      ]),
    ),
  ]);
  return JSON.stringify({ tools, plans, bundles, test: test.connection, live: live.connection, owners, brand, names, paddle });
}

/** Each state-changing form of the Configure section, with fields that would succeed. */
function forms(slug: string, ownerEmail: string): [string, Record<string, string>][] {
  const base = `/dashboard/w/${slug}/test`;
  const live = `/dashboard/w/${slug}/live`;
  return [
    [`${base}/tools`, { id: "planted", name: "Planted" }],
    [`${base}/tools/tabmaster`, { name: "Renamed", trial_days: "30" }],
    [`${base}/tools/tabmaster/plans`, { id: "planted", name: "Planted", billing: "one_time", amount: "1" }],
    [`${base}/tools/tabmaster/plans/lifetime`, { name: "Renamed" }],
    [`${base}/tools/tabmaster/plans/lifetime/retire`, {}],
    [`${base}/bundles`, { id: "planted", name: "Planted", "tool:notepad": "1" }],
    [`${base}/bundles/suite/change`, { "tool:notepad": "1" }],
    [`${base}/bundles/suite/plans`, { id: "planted", name: "Planted", billing: "one_time" }],
    [`${base}/bundles/suite/plans/suite-lifetime`, { name: "Renamed" }],
    [`${base}/bundles/suite/plans/suite-lifetime/retire`, {}],
    [`${base}/stripe`, { webhook_secret: "whsec_plantedSecret0123" }],
    [`${base}/stripe/disconnect`, {}],
    // Paddle's, in live (Stripe holds test here): its secrets, its disconnect, a plan's price.
    [`${live}/stripe/paddle`, { webhook_secret: "pdl_ntfset_plantedSecret0123" }],
    [`${live}/stripe/paddle/disconnect`, {}],
    [`${live}/tools/tabmaster/plans/lifetime/paddle`, { paddle_id: "pri_01plantedplantedplantedpla" }],
    [`${base}/owners/invite`, { email: "attacker@example.com" }],
    [`${base}/owners/withdraw`, { email: "invited@example.com" }],
    [`${base}/owners/remove`, { email: ownerEmail }],
    [`${base}/branding/accent`, { accent: "#1f6f43" }],
    [`${base}/branding/logo/remove`, {}],
    [`${base}/branding/language`, { language: "de" }],
    [`${base}/tools/tabmaster/names`, { name_de: "Geplant" }],
    [`${base}/tools/tabmaster/plans/lifetime/names`, { name_de: "Geplant" }],
    [`${base}/bundles/suite/names`, { name_de: "Geplant" }],
  ];
}

function pages(slug: string, ownerEmail: string): string[] {
  const base = `/dashboard/w/${slug}/test`;
  return [
    `${base}/tools`,
    `${base}/tools/tabmaster`,
    `${base}/tools/tabmaster/plans/lifetime`,
    `${base}/tools/tabmaster/plans/lifetime/retire`,
    `${base}/bundles`,
    `${base}/bundles/suite`,
    `${base}/bundles/suite/change?tool:notepad=1`,
    `${base}/bundles/suite/plans/suite-lifetime`,
    `${base}/stripe`,
    `${base}/stripe/disconnect`,
    `${base}/stripe/paddle/disconnect`,
    `/dashboard/w/${slug}/live/stripe`,
    `/dashboard/w/${slug}/live/tools/tabmaster/plans/lifetime`,
    `${base}/owners`,
    `${base}/owners/remove?email=${encodeURIComponent(ownerEmail)}`,
    `${base}/branding`,
    `${base}/tools/tabmaster/names`,
    `${base}/tools/tabmaster/plans/lifetime/names`,
    `${base}/bundles/suite/names`,
  ];
}

function assertPageHeaders(response: LightMyRequestResponse, what: string): void {
  assert.equal(response.headers["content-security-policy"], CSP, what);
  assert.equal(response.headers["cache-control"], "no-store", what);
  assert.equal(response.headers["content-type"], "text/html; charset=utf-8", what);
  assert.doesNotMatch(response.body, /<style| style=|<script>|\son[a-z]+=/i, what);
  // The one script is the Copy button's, from this origin, on the Stripe page only.
  const scripts = response.body.match(/<script[^>]*>/g) ?? [];
  assert.deepEqual(scripts, /\/stripe$/.test(what) ? ['<script src="/dashboard/assets/copy.js" defer>'] : [], what);
}

async function catalogueWithCoOwner(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedCatalogue(env.services);
  await connectTestStripe(env.services, ws);
  await connectTestPaddle(env.services, ws, "live");
  return { env, app, ws };
}

for (const dialect of DIALECTS) {
  describe(`dashboard Configure security (${dialect})`, () => {
    test("every Configure page is HTML under the strict policy; only the Stripe page loads a script, the dashboard's own", async () => {
      const { env, app, ws } = await catalogueWithCoOwner(dialect);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      for (const path of [...pages(ws.slug, ws.ownerEmail), "/dashboard/invitations"]) {
        const page = await browser.get(path);
        assert.ok(page.statusCode === 200 || page.statusCode === 303, `${path}: ${page.statusCode}`);
        if (page.statusCode === 200) assertPageHeaders(page, path.replace(/\?.*$/, ""));
      }
      const script = await browser.get("/dashboard/assets/copy.js");
      assert.equal(script.headers["content-type"], "text/javascript; charset=utf-8");
      assert.match(script.body, /navigator\.clipboard\.writeText/);
    });

    test("a form without the session's token, or from another site, is refused on every Configure form and changes nothing", async () => {
      const { env, app, ws } = await catalogueWithCoOwner(dialect);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      await browser.get(`/dashboard/w/${ws.slug}/test/tools`);
      const before = await snapshot(env.services, ws.slug);
      for (const [path, fields] of [...forms(ws.slug, ws.ownerEmail), ["/dashboard/invitations", {}] as [string, Record<string, string>]]) {
        const refusals: [string, Promise<LightMyRequestResponse>][] = [
          ["no token", browser.post(path, { ...fields, _csrf: "" })],
          ["a wrong token", browser.post(path, { ...fields, _csrf: "0".repeat(64) })],
          ["cross-site", browser.post(path, fields, { "sec-fetch-site": "cross-site" })],
          ["another origin", browser.post(path, fields, { "sec-fetch-site": "", origin: "https://evil.example" })],
        ];
        for (const [what, pending] of refusals) {
          const response = await pending;
          assert.equal(response.statusCode, 403, `${path}: ${what}`);
        }
      }
      assert.equal(await snapshot(env.services, ws.slug), before);
    });

    test("an owner of another workspace can neither see nor change this one's configuration", async () => {
      const { env, app, ws } = await catalogueWithCoOwner(dialect);
      const other = await seedCatalogue(env.services);
      const intruder = new TestBrowser(app);
      await intruder.signIn(env.dataDir, other.ownerEmail);
      await intruder.get(`/dashboard/w/${other.slug}/test/tools`);
      const before = await snapshot(env.services, ws.slug);
      for (const path of pages(ws.slug, ws.ownerEmail)) assert.equal((await intruder.get(path)).statusCode, 404, path);
      for (const [path, fields] of forms(ws.slug, ws.ownerEmail)) {
        const response = await intruder.post(path, fields);
        assert.equal(response.statusCode, 404, path);
        assert.ok(!response.body.includes(ws.slug), `${path}: the answer names nothing of it`);
      }
      assert.equal(await snapshot(env.services, ws.slug), before);
      // Their own workspace, at the same addresses, works.
      assert.equal((await intruder.post(`/dashboard/w/${other.slug}/test/tools`, { id: "theirs", name: "Theirs" })).statusCode, 303);
    });

    test("names that are markup are shown as text: tools, plans, bundles, the bundle change page, Stripe's reasons", async () => {
      const { env, app, ws } = await catalogueWithCoOwner(dialect);
      const { db, clock } = env.services;
      const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
      await createTool(db, clock, { workspace: ws.slug, id: "evil", name: evil });
      await createPlan(db, clock, { workspace: ws.slug, tool: "evil", id: "evil-plan", name: evil, billing: "one_time", amountCents: 100 });
      await createBundle(db, clock, { workspace: ws.slug, id: "evil-bundle", name: evil, toolIds: ["evil"] });
      // A verified Stripe event naming a plan that is markup: ignored, and its reason shown.
      const api = await testApi(env.services);
      const secret = await connectTestStripe(env.services, ws);
      const session = paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "<b>gold</b>" }, now: clock.now() });
      assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "ignored");

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test`;
      for (const path of [
        `${base}/tools`,
        `${base}/tools/evil`,
        `${base}/tools/evil/plans/evil-plan`,
        `${base}/tools/evil/plans/evil-plan/retire`,
        `${base}/bundles`,
        `${base}/bundles/evil-bundle`,
        `${base}/bundles/evil-bundle/change?tool:tabmaster=1`,
        `${base}/bundles/suite/change?tool:evil=1`,
      ]) {
        const page = await browser.get(path);
        assert.equal(page.statusCode, 200, path);
        assert.doesNotMatch(page.body, /<script>|<img/, path);
        assert.ok(page.body.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), path);
      }
      const stripe = await browser.get(`${base}/stripe`);
      assert.doesNotMatch(stripe.body, /<b>gold<\/b>/);
      assert.ok(stripe.body.includes("&lt;b&gt;gold&lt;/b&gt;"));
    });
  });
}
