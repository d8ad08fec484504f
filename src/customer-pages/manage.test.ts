// The hosted Manage page, in process with a browser's cookies and form tokens, against a
// local stand-in of Stripe's API: what a buyer sees (a licence and its key, a
// subscription, a team purchase, trials and grants, devices and which one is this), what they change (cancel at period end and
// resume, the billing portal, seats, devices), and what they cannot reach (another
// person's, workspace's or environment's; forms from elsewhere). SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openDeviceSession } from "../client/client.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import type { Dialect } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { continueWithTicket, pagesOf, signedInDevice, signInOnPages, ticketFor } from "../test-support/customer-pages.js";
import { dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi, type Workspace } from "../test-support/harness.js";
import { connectTestStripe, deliver, emittedEvents, ofType, paymentSession, stripeEvent, stripeId, subscriptionObject } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { updateMeter } from "../usage/terms.service.js";
import { updateTool } from "../workspaces/workspace.service.js";
import { openCustomerSession } from "./customer-session.service.js";

const SECRET_KEY = "sk_test_managePageStandIn";
const KEY = /wlk_[0-9A-Za-z]{32}/;

async function setUp(dialect: Dialect, options: { secretKey?: boolean; seed?: typeof seedCatalogue } = {}) {
  const stripeApi = await startStripeApi();
  const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
  const { services, clock } = env;
  const api = await testApi(services);
  const newWorkspace = async () => {
    const ws = await (options.seed ?? seedCatalogue)(services);
    const secret = await connectTestStripe(services, ws, "test", options.secretKey === false ? undefined : SECRET_KEY);
    const send = (type: string, object: Record<string, unknown>, extra: { previousAttributes?: Record<string, unknown> } = {}) =>
      deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now(), ...extra }), clock.now());
    return { ws, send };
  };
  const { ws, send } = await newWorkspace();

  /** What a buyer holds: a licence, a monthly subscription, a team licence of 3 seats, two signed-in devices. */
  const buy = async (target: { ws: Workspace; send: typeof send }, email: string) => {
    const now = clock.now();
    const account = (await ensurePerson(services.db, target.ws.workspaceId, "test", email, now)).id;
    await target.send("checkout.session.completed", paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }));
    await target.send(
      "checkout.session.completed",
      paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_seats: "3", warden_account: account }, now: now - 1000 }),
    );
    const subscription = stripeId("sub");
    const sub = { id: subscription, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS };
    const metadata = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account };
    await target.send("customer.subscription.created", subscriptionObject({ ...sub, status: "active", metadata }));
    const devices: string[] = [];
    for (const name of ["Work laptop", "Home desktop"]) {
      const opened = await services.db.transaction().execute((trx) =>
        openDeviceSession(trx, {
          workspaceId: target.ws.workspaceId,
          env: "test",
          toolId: "tabmaster",
          personId: account,
          licenceId: null,
          device: { name, platform: "chrome-mac" },
          now,
        }),
      );
      devices.push(opened.device.id);
    }
    return { account, subscription, devices };
  };
  const signedIn = async (email: string, target: Workspace = ws, pagesEnv: Env = "test") => {
    const browser = new TestBrowser(api.app);
    await signInOnPages(browser, env.dataDir, pagesOf(target, pagesEnv), email);
    return browser;
  };
  return { ...env, api, stripeApi, ws, send, newWorkspace, buy, signedIn, base: pagesOf(ws), events: () => emittedEvents(services, ws) };
}

/** What an automated check reads off the markup: lang, one h1, unique ids, a label for every field a person fills or reads. */
function assertAccessibleMarkup(page: string): void {
  assert.match(page, /<html lang="en">/);
  assert.equal(page.match(/<h1\b/g)?.length, 1, "one h1");
  const ids = [...page.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1] as string);
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    "unique ids",
  );
  for (const [field, id] of page.matchAll(/<input\b(?![^>]*type="hidden")[^>]*\sid="([^"]+)"[^>]*>/g)) {
    assert.match(page, new RegExp(`<label for="${id}">`), `a label for ${field}`);
  }
  assert.doesNotMatch(page, /<input\b(?![^>]*type="hidden")(?![^>]*\sid=)[^>]*>/, "no field without an id to label");
}

const teamId = async (t: Awaited<ReturnType<typeof setUp>>) =>
  (await t.services.db.selectFrom("licences").select("id").where("workspace_id", "=", t.ws.workspaceId).where("seats", "=", 3).executeTakeFirstOrThrow()).id;

for (const dialect of DIALECTS) {
  describe(`hosted Manage page (${dialect})`, () => {
    test("a buyer sees their licence and key, subscription, team and devices, and changes each through Stripe and the client's use cases", async () => {
      const t = await setUp(dialect);
      const email = `ada-${t.ws.slug}@example.com`;
      const held = await t.buy(t, email);
      const team = await teamId(t);
      const browser = await t.signedIn(email);

      const page = await browser.get(`${t.base}/manage`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<h1>Your purchases<\/h1>/);
      assert.match(page.body, new RegExp(`as <strong>${email}</strong>`));
      assert.match(page.body, /<h3 id="licence-\d">Tab Master · Lifetime<\/h3><span class="badge badge-ok">Active<\/span>/);
      assert.match(page.body, new RegExp(`<input id="key-\\d" class="key-reveal" readonly value="${KEY.source}">`));
      assert.match(page.body, /<script src="\/dashboard\/assets\/copy.js" defer><\/script>/);
      assert.match(page.body, /Tab Master · Monthly<\/h3><span class="badge badge-ok">Active<\/span>/);
      assert.match(page.body, /€5.00 a month/);
      assert.match(page.body, /<dt>Renews<\/dt>/);
      assert.match(page.body, new RegExp(`href="${t.base}/manage/subscriptions/${held.subscription}/cancel">Cancel subscription…`));
      assert.match(page.body, /0 of 3 seats handed out/);
      // The team licence's plan is priced per seat; the buyer's own monthly plan is not.
      assert.match(page.body, /€49.00 per seat/);
      assert.doesNotMatch(page.body, /€5.00 a month per seat/);
      assert.equal([...page.body.matchAll(/\/manage\/devices\/dev_[0-9A-Za-z]+\/sign-out/g)].length, 2);
      assert.match(page.headers["content-security-policy"] as string, /form-action 'self' https:\/\/billing\.stripe\.com;/);
      assertAccessibleMarkup(page.body);

      // Cancel at the period's end: asked once more, then made at Stripe, with the webhook's own event.
      const confirm = await browser.get(`${t.base}/manage/subscriptions/${held.subscription}/cancel`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /<h1>Cancel Tab Master · Monthly\?<\/h1>/);
      const cancelled = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/cancel`);
      assert.equal(cancelled.statusCode, 303, cancelled.body);
      assert.equal(cancelled.headers.location, `${t.base}/manage?done=cancelled`);
      assert.deepEqual(t.stripeApi.calls.at(-1)?.form, { cancel_at_period_end: "true" });
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 1);
      const after = await browser.get(`${t.base}/manage?done=cancelled`);
      assert.match(after.body, /set to end at the end of its period/);
      assert.match(after.body, /<span class="badge badge-pending">Ending<\/span>/);
      assert.match(after.body, /<dt>Ends<\/dt>/);
      assert.match(after.body, /Resume subscription/);

      const resumed = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/resume`);
      assert.equal(resumed.headers.location, `${t.base}/manage?done=resumed`);
      assert.deepEqual(t.stripeApi.calls.at(-1)?.form, { cancel_at_period_end: "false" });
      assert.match((await browser.get(`${t.base}/manage`)).body, /Cancel subscription…/);

      // The billing portal: a session for the subscription's Stripe customer, back to this page.
      const portal = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/billing`);
      assert.equal(portal.statusCode, 303, portal.body);
      assert.match(portal.headers.location as string, /^https:\/\/billing\.stripe\.com\/p\/session\/bps_/);
      const [retrieve, create] = t.stripeApi.calls.slice(-2);
      assert.deepEqual([retrieve?.method, retrieve?.path], ["GET", `/v1/subscriptions/${held.subscription}`]);
      assert.deepEqual(
        [create?.method, create?.path, create?.form],
        ["POST", "/v1/billing_portal/sessions", { customer: `cus_of_${held.subscription}`, return_url: `https://warden.example.com${t.base}/manage` }],
      );

      // Seats: handed out by address, refused with the field's error, taken back.
      const handOut = await browser.post(`${t.base}/manage/teams/${team}/seats`, { email: `grace-${t.ws.slug}@example.com` });
      assert.equal(handOut.headers.location, `${t.base}/manage?done=seat-assigned`);
      const withSeat = await browser.get(`${t.base}/manage`);
      assert.match(withSeat.body, new RegExp(`<span class="manage-name">grace-${t.ws.slug}@example.com</span>`));
      assert.match(withSeat.body, /1 of 3 seats handed out/);
      const bad = await browser.post(`${t.base}/manage/teams/${team}/seats`, { email: "not an address" });
      assert.equal(bad.statusCode, 400);
      const field = `seat-email-${team}`;
      assert.match(bad.body, new RegExp(`<div class="notice notice-error" id="${field}-error" role="alert">`));
      assert.match(bad.body, new RegExp(`id="${field}"[^>]*value="not an address" aria-invalid="true" aria-describedby="${field}-error" autofocus`));
      assertAccessibleMarkup(bad.body);
      assert.equal(bad.body.match(/\sautofocus[\s>]/g)?.length, 1, "the field in error alone takes the focus");
      const seat = /\/manage\/teams\/[^/]+\/seats\/(lic_[0-9A-Za-z]+)\/revoke/.exec(withSeat.body)?.[1] as string;
      const takenBack = await browser.post(`${t.base}/manage/teams/${team}/seats/${seat}/revoke`);
      assert.equal(takenBack.headers.location, `${t.base}/manage?done=seat-revoked`);
      const seatRow = await t.services.db.selectFrom("licences").select("status").where("id", "=", seat).executeTakeFirstOrThrow();
      assert.equal(seatRow.status, "revoked");

      // A device signed out: its token stops at once, and the list shows the other one.
      const out = await browser.post(`${t.base}/manage/devices/${held.devices[1]}/sign-out`);
      assert.equal(out.headers.location, `${t.base}/manage?done=signed-out`);
      const device = await t.services.db
        .selectFrom("devices")
        .select(["signed_out_at", "token_hash"])
        .where("id", "=", held.devices[1] as string)
        .executeTakeFirstOrThrow();
      assert.deepEqual([Number(device.signed_out_at), device.token_hash], [t.clock.now(), null]);
      const final = await browser.get(`${t.base}/manage?done=signed-out`);
      assert.match(final.body, /Device signed out/);
      assert.equal([...final.body.matchAll(/\/manage\/devices\/dev_[0-9A-Za-z]+\/sign-out/g)].length, 1);
    });

    test("each meter the buyer has: a bar of used of allowance with its words, credits left, the reset, Buy more when a pack is on sale", async () => {
      const t = await setUp(dialect, { seed: seedUsageCatalogue });
      const email = `meters-${t.ws.slug}@example.com`;
      const browser = await t.signedIn(email);
      const usagePanel = async (b: TestBrowser = browser, base = t.base) => {
        const page = await b.get(`${base}/manage`);
        assert.equal(page.statusCode, 200, page.body);
        const start = page.body.indexOf('<section class="panel" aria-labelledby="usage">');
        return start < 0 ? null : page.body.slice(start, page.body.indexOf("</section>", start));
      };
      // Holding nothing: the tool's free allowance, and the pack on sale.
      const free = (await usagePanel()) ?? "";
      assert.match(free, /<h3 id="usage-summaries">Summaries<\/h3><span class="muted">10 summaries left<\/span>/);
      assert.match(
        free,
        /<meter min="0" max="10" low="8" high="9" optimum="0" value="0" aria-labelledby="usage-summaries" aria-describedby="usage-summaries-text">/,
      );
      assert.match(free, /<p class="usage-figure" id="usage-summaries-text">0 of 10 summaries used this period<\/p>/);
      assert.ok(free.includes(`<a class="button" href="${t.base}/plans#packs">Buy more<span class="sr-only"> summaries</span></a>`));

      // A licence (100 a calendar month) and a pack (1,000 credits), then spends through the vendor API.
      const now = t.clock.now();
      await t.send("checkout.session.completed", paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }));
      await t.send("checkout.session.completed", paymentSession({ email, amount: 900, metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000" }, now }));
      const spend = async (quantity: number) => {
        const spent = await t.api.request({
          method: "POST",
          url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`,
          key: t.ws.testKey,
          payload: { meter: "summaries", quantity },
        });
        assert.equal(spent.statusCode, 200, spent.body);
      };
      await spend(30);
      const some = (await usagePanel()) ?? "";
      assert.match(some, /<meter min="0" max="100" low="80" high="95" optimum="0" value="30" [^>]*>30 of 100<\/meter>/);
      assert.match(some, /30 of 100 summaries used this period/);
      assert.match(some, /<dt>Left this period<\/dt><dd>70 summaries<\/dd>/);
      assert.match(some, /<dt>Credits left<\/dt><dd>1,000 summaries<\/dd>/);
      assert.ok(some.includes('<dt>Resets</dt><dd><time datetime="2026-12-01T00:00:00.000Z">'), "the licence's allowance resets at the next calendar month");
      assert.match(some, /1,070 summaries left/);
      // The pack is listed as a credit pack, without a key: it opens nothing. The licence keeps its key.
      const purchases = (await browser.get(`${t.base}/manage`)).body;
      assert.match(purchases, /<dt>Kind<\/dt><dd>Credit pack<\/dd>/);
      assert.match(purchases, /Its credits are counted in Usage; it gives no access of its own\./);
      assert.equal(purchases.match(/Paste it into /g)?.length, 1, "one key shown: the licence's");
      // Past the allowance, the credits pay.
      await spend(120);
      const more = (await usagePanel()) ?? "";
      assert.match(more, /value="100" [^>]*>100 of 100<\/meter>/);
      assert.match(more, /<dt>Left this period<\/dt><dd>0 summaries<\/dd>/);
      assert.match(more, /<dt>Credits left<\/dt><dd>950 summaries<\/dd>/);

      // A meter's name is the vendor's text: escaped.
      await updateMeter(t.services.db, t.clock, { workspace: t.ws.slug, tool: "tabmaster", id: "summaries", name: "<b>Sums</b> & more" });
      assert.match((await usagePanel()) ?? "", /<h3 id="usage-summaries">&lt;b&gt;Sums&lt;\/b&gt; &amp; more<\/h3>/);

      // A tool without meters shows no usage; nor does a licence key's session (its person's meters are not its to read).
      assert.equal(await usagePanel(browser, pagesOf(t.ws, "test", "notepad")), null);
      const person = await t.services.db.selectFrom("people").select("id").where("workspace_id", "=", t.ws.workspaceId).executeTakeFirstOrThrow();
      const licence = await t.services.db
        .selectFrom("licences")
        .select("id")
        .where("workspace_id", "=", t.ws.workspaceId)
        .where("plan_id", "=", "lifetime")
        .executeTakeFirstOrThrow();
      const keyToken = await t.services.db
        .transaction()
        .execute((trx) =>
          openCustomerSession(trx, { workspaceId: t.ws.workspaceId, env: "test", personId: person.id, licenceId: licence.id, now: t.clock.now() }),
        );
      const keyed = new TestBrowser(t.api.app);
      keyed.cookies.set(`warden_customer_${t.ws.slug}_test`, keyToken);
      assert.equal(await usagePanel(keyed), null);

      // The same address in another workspace has that workspace's meters: its free allowance, none of these credits.
      const other = await t.newWorkspace();
      const elsewhere = new TestBrowser(t.api.app);
      await signInOnPages(elsewhere, t.dataDir, pagesOf(other.ws), email);
      const theirs = (await usagePanel(elsewhere, pagesOf(other.ws))) ?? "";
      assert.match(theirs, /0 of 10 summaries used this period/);
      assert.match(theirs, /<dt>Credits left<\/dt><dd>0 summaries<\/dd>/);
    });

    test("trials and grants are listed with their ends (running first, No end for a grant without one); the device a page ticket came from is This device", async () => {
      const t = await setUp(dialect);
      const email = `given-${t.ws.slug}@example.com`;
      await updateTool(t.services.db, t.clock, { workspace: t.ws.slug, id: "tabmaster", trialDays: "7" });
      const device = await signedInDevice(t.api.app, t.dataDir, t.ws, email);
      const trial = await t.api.request({ method: "POST", url: `/api/client/v1/tools/${t.ws.tool}/trial`, headers: { authorization: `Bearer ${device}` } });
      assert.equal(trial.statusCode, 201, trial.body);
      const trialEnd = new Date(t.clock.now() + 7 * DAY_MS).toISOString();
      const withdrawn = await t.api.request({ method: "POST", url: `/api/v1/tools/${t.ws.tool}/grants`, key: t.ws.testKey, payload: { email, days: 30 } });
      assert.equal(withdrawn.statusCode, 201, withdrawn.body);
      t.clock.advance(60_000);
      const revokedAt = new Date(t.clock.now()).toISOString();
      assert.equal(
        (await t.api.request({ method: "DELETE", url: `/api/v1/tools/${t.ws.tool}/grants/${withdrawn.json().id}`, key: t.ws.testKey })).statusCode,
        200,
      );
      const forever = await t.api.request({ method: "POST", url: "/api/v1/tools/notepad/grants", key: t.ws.testKey, payload: { email, note: "press" } });
      assert.equal(forever.statusCode, 201, forever.body);

      // Signed in by code: the page cannot tell which device is in use, so none is marked.
      const browser = await t.signedIn(email);
      const page = await browser.get(`${t.base}/manage`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<h2 id="grants">Trials and free access<\/h2>/);
      const heads = [...page.body.matchAll(/<h3 id="grant-[^"]+">([^<]+)<\/h3><span class="badge [^"]+">([^<]+)<\/span>/g)].map((m) => `${m[1]}: ${m[2]}`);
      assert.deepEqual(heads, ["Notepad · Free access: Active", "Tab Master · Trial: Active", "Tab Master · Free access: Withdrawn"]);
      assert.match(page.body, new RegExp(`Tab Master · Trial</h3>[\\s\\S]*?<dt>Ends</dt><dd><time datetime="${trialEnd}">`));
      assert.match(page.body, /Notepad · Free access<\/h3>[\s\S]*?<dt>Ends<\/dt><dd>No end<\/dd>/);
      assert.match(page.body, new RegExp(`Tab Master · Free access</h3>[\\s\\S]*?<dt>Ended</dt><dd><time datetime="${revokedAt}">`));
      assert.doesNotMatch(page.body, /press/, "the vendor's note is theirs, not shown to the person");
      assert.doesNotMatch(page.body, /This device/);
      assertAccessibleMarkup(page.body);

      // The extension opens Manage with a ticket: the browser already signed in as its person keeps its session, now of that device.
      const link = `${t.base}/manage?ticket=${(await ticketFor(t.api.app, t.ws.tool, device)).json().ticket}`;
      const opened = await browser.get(link);
      assert.equal(opened.statusCode, 303);
      const marked = await browser.get(opened.headers.location as string);
      assert.equal(marked.body.match(/This device/g)?.length, 1);
      assert.match(marked.body, /<span class="manage-name">Work laptop <span class="badge badge-ok">This device<\/span><\/span>/);

      // A browser that was signed out continues as the ticket's person, and the session it gets is of that device too.
      const fresh = new TestBrowser(t.api.app);
      const landed = (await continueWithTicket(fresh, `${t.base}/manage?ticket=${(await ticketFor(t.api.app, t.ws.tool, device)).json().ticket}`)).landed;
      assert.match(landed.body, /Work laptop <span class="badge badge-ok">This device<\/span>/);
      assert.match(landed.body, /Tab Master · Trial<\/h3>/);

      // A person without trials or grants has no such section.
      const other = await t.signedIn(`nobody-${t.ws.slug}@example.com`);
      const empty = await other.get(`${t.base}/manage`);
      assert.doesNotMatch(empty.body, /Trials and free access|This device/);
    });

    test("without payments no Buy more is offered", async () => {
      const t = await setUp(dialect, { seed: seedUsageCatalogue, secretKey: false });
      const browser = await t.signedIn(`nopay-${t.ws.slug}@example.com`);
      const page = (await browser.get(`${t.base}/manage`)).body;
      assert.match(page, /0 of 10 summaries used this period/);
      assert.doesNotMatch(page, /Buy more/);
    });

    test("without a Stripe secret key the page says the vendor handles billing, and offers nothing it cannot do", async () => {
      const t = await setUp(dialect, { secretKey: false });
      const email = `linus-${t.ws.slug}@example.com`;
      const held = await t.buy(t, email);
      const browser = await t.signedIn(email);
      const page = await browser.get(`${t.base}/manage`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Test workspace handles the billing of this subscription: to cancel it, or to change how you pay, contact them\./);
      assert.doesNotMatch(page.body, /Cancel subscription|Payment method and invoices/);
      assert.doesNotMatch(page.headers["content-security-policy"] as string, /billing\.stripe\.com/);
      for (const action of ["cancel", "billing"]) {
        const refused = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/${action}`);
        assert.equal(refused.statusCode, 400, action);
        assert.match(
          refused.body,
          /This subscription is billed by Test workspace outside these pages\. Ask them to change it, or about payments and invoices\./,
          "in the page's words, not the API's",
        );
      }
      assert.equal(t.stripeApi.calls.length, 0);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 0);
    });

    test("Stripe's refusals reach the page in words: a portal not set up, a subscription Stripe does not hold", async () => {
      const t = await setUp(dialect);
      const email = `hopper-${t.ws.slug}@example.com`;
      const held = await t.buy(t, email);
      const browser = await t.signedIn(email);
      await browser.get(`${t.base}/manage`);
      t.stripeApi.failWith = {
        status: 400,
        error: { type: "invalid_request_error", message: "No configuration provided and your test mode default configuration has not been created." },
      };
      const notSetUp = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/billing`);
      assert.equal(notSetUp.statusCode, 400);
      assert.match(notSetUp.body, /<div class="notice notice-error" role="alert">Stripe refused: No configuration provided/);
      assert.match(notSetUp.body, /<h1>Your purchases<\/h1>/, "the page again, with the refusal");
      t.stripeApi.failWith = null;
      t.stripeApi.unknownSubscriptions.add(held.subscription);
      for (const action of ["billing", "cancel"]) {
        const missing = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/${action}`);
        assert.equal(missing.statusCode, 400, action);
        assert.match(missing.body, /This subscription is billed by Test workspace outside these pages\./);
      }
      assert.equal(
        Number(
          (await t.services.db.selectFrom("subscriptions").select("cancel_at_period_end").where("id", "=", held.subscription).executeTakeFirstOrThrow())
            .cancel_at_period_end,
        ),
        0,
      );
    });

    test("another person's, workspace's or environment's subscription, team, seat or device is a 404 page; nothing changes", async () => {
      const t = await setUp(dialect);
      const buyer = `buyer-${t.ws.slug}@example.com`;
      const held = await t.buy(t, buyer);
      const team = await teamId(t);
      const owner = await t.signedIn(buyer);
      await owner.post(`${t.base}/manage/teams/${team}/seats`, { email: `seat-${t.ws.slug}@example.com` });
      const seat = /\/seats\/(lic_[0-9A-Za-z]+)\/revoke/.exec((await owner.get(`${t.base}/manage`)).body)?.[1] as string;

      const other = await t.newWorkspace();
      const sameAddressElsewhere = new TestBrowser(t.api.app);
      await signInOnPages(sameAddressElsewhere, t.dataDir, pagesOf(other.ws), buyer);
      const live = await t.signedIn(buyer, t.ws, "live");
      const stranger = await t.signedIn(`stranger-${t.ws.slug}@example.com`);
      const attempts = (base: string) =>
        [
          [`${base}/manage/subscriptions/${held.subscription}/cancel`, {}],
          [`${base}/manage/subscriptions/${held.subscription}/resume`, {}],
          [`${base}/manage/subscriptions/${held.subscription}/billing`, {}],
          [`${base}/manage/teams/${team}/seats`, { email: `more-${t.ws.slug}@example.com` }],
          [`${base}/manage/teams/${team}/seats/${seat}/revoke`, {}],
          [`${base}/manage/devices/${held.devices[0]}/sign-out`, {}],
        ] as const;
      for (const [browser, base] of [
        [stranger, t.base],
        [sameAddressElsewhere, pagesOf(other.ws)],
        [live, pagesOf(t.ws, "live")],
      ] as const) {
        for (const [url, fields] of attempts(base)) {
          const answer = await browser.post(url, fields);
          assert.equal(answer.statusCode, 404, `${url}: ${answer.body.slice(0, 200)}`);
          assert.match(answer.body, /<h1>Page not found<\/h1>/, url);
        }
        assert.equal((await browser.get(`${base}/manage/subscriptions/${held.subscription}/cancel`)).statusCode, 404);
      }
      assert.equal(t.stripeApi.calls.length, 0);
      const devices = await t.services.db.selectFrom("devices").select("signed_out_at").where("person_id", "=", held.account).execute();
      assert.ok(devices.every((d) => d.signed_out_at === null));
      assert.equal((await t.services.db.selectFrom("licences").select("status").where("id", "=", seat).executeTakeFirstOrThrow()).status, "active");
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 0);
    });

    test("every form refuses another site, another origin and a missing token; signed out, the page and its forms lead to sign-in", async () => {
      const t = await setUp(dialect);
      const email = `csrf-${t.ws.slug}@example.com`;
      const held = await t.buy(t, email);
      const team = await teamId(t);
      const browser = await t.signedIn(email);
      await browser.get(`${t.base}/manage`);
      const forms = [
        [`${t.base}/manage/subscriptions/${held.subscription}/cancel`, {}],
        [`${t.base}/manage/subscriptions/${held.subscription}/resume`, {}],
        [`${t.base}/manage/subscriptions/${held.subscription}/billing`, {}],
        [`${t.base}/manage/teams/${team}/seats`, { email: `x-${t.ws.slug}@example.com` }],
        [`${t.base}/manage/teams/${team}/seats/lic_${"0".repeat(24)}/revoke`, {}],
        [`${t.base}/manage/devices/${held.devices[0]}/sign-out`, {}],
      ] as const;
      for (const [url, fields] of forms) {
        const crossSite = await browser.post(url, fields, { "sec-fetch-site": "cross-site" });
        assert.equal(crossSite.statusCode, 403, url);
        assert.match(crossSite.body, /<h1>Request refused<\/h1>/);
        assert.equal((await browser.post(url, fields, { "sec-fetch-site": "", origin: "https://evil.example" })).statusCode, 403, url);
        const noToken = await browser.post(url, { ...fields, _csrf: "" });
        assert.equal(noToken.statusCode, 403, url);
        assert.match(noToken.body, /Form expired/);
      }
      // Another signed-in browser's token is not this session's.
      const other = await t.signedIn(`other-${t.ws.slug}@example.com`);
      await other.get(`${t.base}/manage`);
      assert.equal((await browser.post(`${t.base}/manage/devices/${held.devices[0]}/sign-out`, { _csrf: other.csrf })).statusCode, 403);
      assert.equal(t.stripeApi.calls.length, 0);
      assert.ok(
        (await t.services.db.selectFrom("devices").select("signed_out_at").where("person_id", "=", held.account).execute()).every(
          (d) => d.signed_out_at === null,
        ),
      );

      const anonymous = new TestBrowser(t.api.app);
      const back = encodeURIComponent(`${t.base}/manage`);
      const page = await anonymous.get(`${t.base}/manage`);
      assert.equal(page.statusCode, 303);
      assert.equal(page.headers.location, `${t.base}/sign-in?return=${back}`);
      await anonymous.get(`${t.base}/sign-in`);
      const posted = await anonymous.post(`${t.base}/manage/devices/${held.devices[0]}/sign-out`);
      assert.equal(posted.statusCode, 303);
      assert.equal(posted.headers.location, `${t.base}/sign-in?return=${back}`);
    });

    test("a session from a key-activated device sees that licence and its devices only, and cannot act for the buyer", async () => {
      const t = await setUp(dialect);
      const email = `keyed-${t.ws.slug}@example.com`;
      const held = await t.buy(t, email);
      const key = KEY.exec((await (await t.signedIn(email)).get(`${t.base}/manage`)).body)?.[0] as string;
      assert.equal((await t.api.request({ method: "POST", url: "/api/v1/tools/notepad/grants", key: t.ws.testKey, payload: { email } })).statusCode, 201);
      const activated = await t.api.request({
        method: "POST",
        url: `/api/client/v1/tools/${t.ws.tool}/activate`,
        payload: { workspace: t.ws.slug, key, device: { name: "Shared PC", platform: "edge-windows" } },
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const ticket = await t.api.request({
        method: "POST",
        url: `/api/client/v1/tools/${t.ws.tool}/page-tickets`,
        headers: { authorization: `Bearer ${activated.json().token}` },
      });
      assert.equal(ticket.statusCode, 200, ticket.body);

      const browser = new TestBrowser(t.api.app);
      const page = (await continueWithTicket(browser, `${t.base}/manage?ticket=${ticket.json().ticket}`)).landed;
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /You are signed in with a licence key/);
      assert.match(page.body, new RegExp(`value="${key}"`));
      assert.equal([...page.body.matchAll(/<h3 id="licence-\d">/g)].length, 1, "the licence of the key only");
      assert.doesNotMatch(page.body, /Subscriptions|Team seats|Work laptop/);
      assert.match(page.body, /<span class="manage-name">Shared PC <span class="badge badge-ok">This device<\/span><\/span>/);
      assert.doesNotMatch(page.body, /Trials and free access/, "a licence key shows no trial or grant of the person");
      assertAccessibleMarkup(page.body);

      const cancel = await browser.post(`${t.base}/manage/subscriptions/${held.subscription}/cancel`);
      assert.equal(cancel.statusCode, 401);
      assert.match(cancel.body, /sign in with your email address to cancel a subscription/);
      assert.equal((await browser.post(`${t.base}/manage/devices/${held.devices[0]}/sign-out`)).statusCode, 404);
      assert.equal(t.stripeApi.calls.length, 0);
    });
  });
}
