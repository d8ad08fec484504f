import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";

/** The first element a keyboard reaches in a page's body (hidden inputs are not reached). */
function firstFocusable(page: string): string {
  const body = page.slice(page.indexOf("<body"));
  const found = /<(?:a|button|select|textarea|summary)\b[^>]*>|<input\b(?![^>]*type="hidden")[^>]*>|<[a-z]+\b[^>]*\stabindex="\d+"[^>]*>/.exec(body);
  assert.ok(found, "a focusable element");
  return found[0];
}

function duplicateIds(page: string): string[] {
  const ids = [...page.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1] as string);
  return ids.filter((id, i) => ids.indexOf(id) !== i);
}

/** The field's error is on the page, tied to the field, and the field takes the focus (the only one that does). */
function assertErrorTied(page: string, fieldId: string, message: RegExp): void {
  const field = new RegExp(`<(?:input|select|textarea)\\b[^>]*\\sid="${fieldId}"[^>]*>`).exec(page)?.[0];
  assert.ok(field, `the field ${fieldId}`);
  assert.match(field, /\saria-invalid="true"/, field);
  assert.match(field, new RegExp(`\\saria-describedby="${fieldId}-error"`), field);
  assert.match(field, /\sautofocus[\s>]/, field);
  const error = new RegExp(`<div class="notice notice-error" id="${fieldId}-error" role="alert">([^]*?)</div>`).exec(page);
  assert.ok(error, `the error of ${fieldId}, with the id the field names`);
  assert.match(error[1] ?? "", message);
  assert.equal(page.match(/\sautofocus[\s>]/g)?.length, 1, "one field takes the focus");
  assert.deepEqual(duplicateIds(page), []);
}

for (const dialect of DIALECTS) {
  describe(`dashboard accessibility (${dialect})`, () => {
    test("a skip link is the first stop of every page, signed in or out, and leads to the main landmark", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      const pages = [await browser.get("/dashboard/sign-in")];
      await browser.signIn(env.dataDir, ws.ownerEmail);
      for (const path of [`/dashboard/w/${ws.slug}/test`, `/dashboard/w/${ws.slug}/live/keys`, `/dashboard/w/${ws.slug}/test/webhooks`, "/dashboard/audit"]) {
        pages.push(await browser.get(path));
      }
      for (const page of pages) {
        assert.equal(page.statusCode, 200);
        assert.equal(firstFocusable(page.body), '<a class="skip-link" href="#content">');
        const mains = [...page.body.matchAll(/<main\b[^>]*>/g)].map((m) => m[0]);
        assert.equal(mains.length, 1, "one main landmark");
        assert.match(mains[0] ?? "", /\sid="content"/, "the link's target is the main landmark");
        assert.equal(page.body.match(/\sid="content"/g)?.length, 1, "and nothing else has its id");
        assert.deepEqual(duplicateIds(page.body), []);
      }
    });

    test("an endpoint's page just enabled shows the recovery form twice, each field with its own id and label", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const added = await app.inject({
        method: "POST",
        url: "/api/v1/webhooks/endpoints",
        headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
        payload: JSON.stringify({ url: "https://example.com/hooks" }),
      });
      assert.equal(added.statusCode, 201, added.body);
      const { endpoint } = added.json() as { endpoint: { id: string } };
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test/webhooks/${endpoint.id}?enabled=1`);
      assert.equal(page.statusCode, 200);
      assert.equal(page.body.match(/name="since"/g)?.length, 2, "the form in the notice and in its panel");
      assert.deepEqual(duplicateIds(page.body), []);
      for (const [, id] of page.body.matchAll(/<select id="([^"]+)" name="since"/g)) {
        assert.match(page.body, new RegExp(`<label for="${id}">Deliveries from</label>`));
      }
    });

    test("a form's error is tied to its field, which takes the focus; a field without one is not marked", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);

      const signIn = await browser.get("/dashboard/sign-in");
      assert.doesNotMatch(signIn.body, /aria-invalid|aria-describedby|-error"/, "no error, nothing marked");
      assert.match(signIn.body, /<input id="email"[^>]*\sautofocus[\s>]/, "the one field still takes the focus");
      const badAddress = await browser.post("/dashboard/sign-in", { email: "not an address" });
      assert.equal(badAddress.statusCode, 400);
      assertErrorTied(badAddress.body, "email", /address/i);

      await browser.post("/dashboard/sign-in", { email: ws.ownerEmail });
      const wrongCode = await browser.post("/dashboard/sign-in/code", { code: "12" });
      assert.equal(wrongCode.statusCode, 400);
      assertErrorTied(wrongCode.body, "code", /code/i);

      await browser.signIn(env.dataDir, ws.ownerEmail);
      const webhooks = `/dashboard/w/${ws.slug}/test/webhooks`;
      assert.doesNotMatch((await browser.get(webhooks)).body, /aria-invalid/);
      const badUrl = await browser.post(webhooks, { url: "ftp://example.com/hooks" });
      assert.equal(badUrl.statusCode, 400);
      assertErrorTied(badUrl.body, "url", /http/i);

      const longName = await browser.post(`/dashboard/w/${ws.slug}/test/keys`, { name: "k".repeat(101) });
      assert.equal(longName.statusCode, 400);
      assertErrorTied(longName.body, "name", /100/);

      const invite = await browser.post(`/dashboard/w/${ws.slug}/test/owners/invite`, { email: ws.ownerEmail });
      assert.equal(invite.statusCode, 400);
      assertErrorTied(invite.body, "email", /owns|already/i);

      // The confirmation pages of dangerous actions: the shared one (an invitation) and the live key's own.
      const invitations = `/dashboard/w/${ws.slug}/test/owners/invite`;
      const newcomer = { email: `newcomer-${ws.slug}@example.com` };
      assert.equal((await browser.post(invitations, newcomer)).statusCode, 200);
      const wrongInviteCode = await browser.post(invitations, { ...newcomer, confirm: "1", code: "12" });
      assert.equal(wrongInviteCode.statusCode, 400);
      assertErrorTied(wrongInviteCode.body, "code", /code/i);
      const liveKeys = `/dashboard/w/${ws.slug}/live/keys`;
      assert.equal((await browser.post(liveKeys, { name: "live" })).statusCode, 200);
      const wrongKeyCode = await browser.post(liveKeys, { name: "live", confirm: "1", code: "12" });
      assert.equal(wrongKeyCode.statusCode, 400);
      assertErrorTied(wrongKeyCode.body, "code", /code/i);
    });

    test("the catalogue, Stripe and customer forms tie a refusal to the field the use case names; one naming no field stays a notice", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const w = `/dashboard/w/${ws.slug}/test`;
      await browser.get(w); // the session's form token
      const refused = async (path: string, form: Record<string, string>) => {
        const page = await browser.post(path, form);
        assert.equal(page.statusCode, 400, page.body);
        return page.body;
      };

      const tool = { name: "Link Keeper", id: "linkkeeper", trial_days: "0" };
      assertErrorTied(await refused(`${w}/tools`, { ...tool, id: "no spaces" }), "tool-id", /letters, digits/);
      assertErrorTied(await refused(`${w}/tools`, { ...tool, id: ws.tool }), "tool-id", /exists already/);
      assertErrorTied(await refused(`${w}/tools`, { ...tool, trial_days: "400" }), "tool-trial", /365/);
      assertErrorTied(await refused(`${w}/tools/${ws.tool}`, { name: "Tab Master", trial_days: "x" }), "trial_days", /whole number of days/);
      assertErrorTied(await refused(`${w}/tools/${ws.tool}`, { name: " ", trial_days: "0" }), "name", /name must be/);

      const plans = `${w}/tools/${ws.tool}/plans`;
      const plan = { name: "Lifetime", id: "lifetime", billing: "one_time", amount: "49.00", currency: "eur", interval: "" };
      assertErrorTied(await refused(plans, { ...plan, amount: "4900 cents" }), "plan-amount", /Enter the amount in euros, like 49\.00/);
      assertErrorTied(await refused(plans, { ...plan, currency: "euro" }), "plan-currency", /three letters/);
      assertErrorTied(await refused(plans, { ...plan, amount: "", currency: "euro" }), "plan-currency", /three-letter/);
      assertErrorTied(await refused(plans, { ...plan, billing: "subscription" }), "plan-interval", /month or year/);
      assertErrorTied(await refused(plans, { ...plan, id: "-x" }), "plan-id", /letters, digits/);
      assert.equal((await browser.post(plans, plan)).statusCode, 303);
      assertErrorTied(await refused(`${plans}/lifetime`, { name: "" }), "name", /name must be/);

      const bundle = { name: "Suite", id: "suite", [`tool:${ws.tool}`]: "1" };
      assertErrorTied(await refused(`${w}/bundles`, { ...bundle, name: "" }), "bundle-name", /name must be/);
      const noTools = await refused(`${w}/bundles`, { name: "Suite", id: "suite" });
      assert.match(
        noTools,
        /<div class="notice notice-error" role="alert">A bundle names at least one tool\.<\/div>/,
        "a checkbox group's refusal is a notice",
      );
      assert.doesNotMatch(noTools, /aria-invalid|autofocus/, "with no field marked");

      assertErrorTied(await refused(`${w}/stripe`, { webhook_secret: "not-a-secret" }), "webhook_secret", /whsec_/);
      assertErrorTied(
        await refused(`${w}/stripe`, { webhook_secret: "whsec_abcdefgh12345678", secret_key: "sk_live_abcdefgh12345678" }),
        "secret_key",
        /test environment needs a test mode key/,
      );

      const grants = `${w}/customers/${ws.tool}/${encodeURIComponent("ada@example.com")}/grants`;
      assertErrorTied(await refused(grants, { days: "soon", note: "" }), "days", /days/i);
      assertErrorTied(await refused(grants, { days: "30", note: "n".repeat(201) }), "note", /200 characters/);
    });
  });
}
