// The hosted Plans page, the checkout's way to Stripe and back, and the Trial page, in
// process with a browser's cookies and form tokens, against a local stand-in of Stripe's
// API, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, type TestApi } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent, subscriptionObject, subscriptionSession } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { addFeature, addMeter, setPlanTerms, updateMeter } from "../usage/terms.service.js";
import { createPlan, retirePlan, updateTool } from "../workspaces/workspace.service.js";
import { openCustomerSession } from "./customer-session.service.js";

const SECRET_KEY = "sk_test_hostedPlansStandIn0123";
const DAY = 86_400_000;

async function setUp(dialect: (typeof DIALECTS)[number], seed = seedCatalogue) {
  const stripeApi = await startStripeApi();
  const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
  const app = await dashboardApp(env);
  const ws = await seed(env.services);
  const webhookSecret = await connectTestStripe(env.services, ws, "test", SECRET_KEY);
  const base = pagesOf(ws);
  const browser = new TestBrowser(app);
  return { env, app, ws, base, browser, stripeApi, webhookSecret };
}

/** One offer's card on the Plans page, from its heading to the end of its list item. */
function card(page: string, heading: string): string {
  const at = page.indexOf(`">${heading}</h`);
  assert.ok(at >= 0, `a card headed ${heading}`);
  return page.slice(at, page.indexOf("</form>\n</li>", at));
}

/** Stripe's events straight to the app, as the payment tests send them. */
const apiOf = (app: FastifyInstance): TestApi => ({ app, request: (options) => app.inject(options) });

for (const dialect of DIALECTS) {
  describe(`hosted pages: plans, checkout, trial (${dialect})`, () => {
    test("the Plans page lists the tool's plans and its bundles' in their currency's format, with what each gives; retired ones are gone", async () => {
      const { env, ws, base, browser } = await setUp(dialect);
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        tool: "tabmaster",
        id: "yearly",
        name: "Yearly",
        billing: "subscription",
        amountCents: 4800,
        currency: "usd",
        interval: "year",
      });
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        tool: "tabmaster",
        id: "old",
        name: "Old deal",
        billing: "one_time",
        amountCents: 100,
      });
      await retirePlan(env.services.db, env.clock, { workspace: ws.slug, tool: "tabmaster", id: "old" });
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        tool: "notepad",
        id: "np",
        name: "Notepad only",
        billing: "one_time",
        amountCents: 700,
      });

      const page = await browser.get(`${base}/plans`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<title>Tab Master plans · Test workspace<\/title>/);
      assert.match(
        page.body,
        /<h2 class="offer-name" id="offer-0">Lifetime<\/h2>[\s\S]*?<p class="offer-price"><span class="offer-amount">€49\.00<\/span> <span class="offer-per">once<\/span><\/p>/,
      );
      assert.match(
        page.body,
        /Monthly<\/h2>[\s\S]*?<p class="offer-price"><span class="offer-amount">€5\.00<\/span> <span class="offer-per">a month<\/span><\/p>[\s\S]*?Renews every month until you cancel\./,
      );
      assert.match(
        page.body,
        /Yearly<\/h2>[\s\S]*?<p class="offer-price"><span class="offer-amount">\$48\.00<\/span> <span class="offer-per">a year<\/span><\/p>/,
      );
      assert.match(
        page.body,
        /Suite: Suite for life<\/h2>[\s\S]*?€99\.00<\/span> <span class="offer-per">once[\s\S]*?<li>Link Keeper<\/li><li>Tab Master<\/li>/,
      );
      assert.doesNotMatch(page.body, /Old deal|Notepad only/, "a retired plan and another tool's are not offered");
      assert.match(page.body, /<button class="button primary wide" type="submit" aria-describedby="offer-0">Buy<\/button>/);
      assert.match(page.body, /Sign in<\/a> first to buy for the address you use/);
      assert.doesNotMatch(page.body, /Try Tab Master free/, "no trial offered");
      const policy = page.headers["content-security-policy"] as string;
      assert.match(policy, /form-action 'self' https:\/\/checkout\.stripe\.com/, "the form's answer may go on to Stripe Checkout");
      assert.match(policy, /script-src 'self'; style-src 'self'/);

      await updateTool(env.services.db, env.clock, { workspace: ws.slug, id: "tabmaster", trialDays: "14" });
      const chosen = await browser.get(`${base}/plans?plan=suite-lifetime&bundle=suite`);
      assert.match(chosen.body, /Try Tab Master free for 14 days<\/a>/);
      assert.match(
        chosen.body,
        /<li class="offer is-chosen">\s*<h2 class="offer-name" id="offer-3">Suite: Suite for life<\/h2>\s*<p class="offer-flag">Your choice<\/p>/,
      );
      assert.match(chosen.body, /aria-describedby="offer-3" autofocus>Buy</);
      const unknown = await browser.get(`${base}/plans?plan=old`);
      assert.equal(unknown.statusCode, 200);
      assert.match(unknown.body, /The plan &quot;old&quot; is not on sale for Tab Master\. Choose one of the plans below\./);
      assert.doesNotMatch(unknown.body, /is-chosen/);
    });

    test("each plan shows the features it unlocks and its allowance per period; credit packs have their own section with what they add", async () => {
      const { env, ws, base, browser } = await setUp(dialect, seedUsageCatalogue);
      const tool = { workspace: ws.slug, tool: "tabmaster" };
      await createPlan(env.services.db, env.clock, { ...tool, id: "yearly", name: "Yearly", billing: "subscription", amountCents: 4800, interval: "year" });
      await setPlanTerms(env.services.db, env.clock, { ...tool, id: "yearly", features: ["sync"], allowances: { summaries: 6000 } });
      await createPlan(env.services.db, env.clock, { ...tool, id: "pack-50", name: "50 summaries", billing: "one_time", amountCents: 100, givesAccess: false });
      await setPlanTerms(env.services.db, env.clock, { ...tool, id: "pack-50", credits: { summaries: 50 } });

      const page = (await browser.get(`${base}/plans`)).body;
      const lifetime = card(page, "Lifetime");
      assert.match(lifetime, /Pay once, keep it\./);
      assert.match(lifetime, /<p class="offer-gives-label">Unlocks<\/p><ul class="offer-gives"><li>Export<\/li><\/ul>/);
      assert.match(lifetime, /<p class="offer-gives-label">Includes<\/p><ul class="offer-gives"><li>100 summaries a month<\/li><\/ul>/);
      assert.match(card(page, "Monthly"), /<li>Export<\/li><li>Sync<\/li>[\s\S]*<li>500 summaries a month<\/li>/);
      // A subscription's allowance runs per its billing period.
      assert.match(card(page, "Yearly"), /<li>Sync<\/li><\/ul>[\s\S]*<li>6,000 summaries a year<\/li>/);
      const suite = card(page, "Suite: Suite for life");
      assert.match(suite, /<li>Link Keeper<\/li><li>Tab Master<\/li>[\s\S]*<li>Export<\/li>[\s\S]*<li>200 summaries a month<\/li>/);
      for (const plan of [lifetime, suite]) assert.doesNotMatch(plan, /Adds|Credits last/);

      // The packs: after the plans, in their own section, with what they add and a Buy button of the same form.
      const packs = page.slice(page.indexOf('<section class="offer-section" id="packs" aria-labelledby="packs-title">'));
      assert.match(packs, /^<section[^>]*>\n<h2 id="packs-title">Credit packs<\/h2>/);
      assert.equal(page.indexOf("1,000 summaries</h"), page.indexOf("1,000 summaries</h", page.indexOf('id="packs"')), "the pack is in its section only");
      const pack = card(page, "1,000 summaries");
      assert.match(page, /<h3 class="offer-name" id="offer-4">1,000 summaries<\/h3>/, "a pack's heading is under its section's");
      assert.match(pack, /€9\.00<\/span> <span class="offer-per">once/);
      assert.match(pack, /Pay once; buy it again whenever you need more\./);
      assert.match(pack, /<p class="offer-gives-label">Adds<\/p><ul class="offer-gives"><li>1,000 summaries<\/li><\/ul>/);
      assert.match(pack, /Credits last 365 days from purchase\./);
      assert.doesNotMatch(pack, /Gives you|Unlocks|Includes/, "a pack sold alone gives no access");
      assert.match(
        pack,
        /<input type="hidden" name="plan" value="pack-1000">\n\n<button class="button primary wide" type="submit" aria-describedby="offer-\d">Buy<\/button>/,
      );
      assert.match(card(page, "50 summaries"), /<li>50 summaries<\/li>[\s\S]*Credits last until you spend them\./);
      const ids = [...page.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1]);
      assert.deepEqual(
        ids.filter((id, i) => ids.indexOf(id) !== i),
        [],
        "the packs' ids follow the plans'",
      );
      // A link to a pack chooses it, as a plan's does.
      assert.match((await browser.get(`${base}/plans?plan=pack-1000`)).body, /1,000 summaries<\/h3>\n<p class="offer-flag">Your choice<\/p>/);
    });

    test("a buyer who holds the tool buys a pack again and again: each checkout goes to Stripe, each payment adds its credits", async () => {
      const { env, app, ws, base, browser, stripeApi, webhookSecret } = await setUp(dialect, seedUsageCatalogue);
      const email = `packs-${ws.slug}@example.com`;
      await signInOnPages(browser, env.dataDir, base, email);
      const person = await env.services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
      const pay = async (plan: string) => {
        const chosen = await browser.post(`${base}/plans`, { plan });
        assert.equal(chosen.statusCode, 303, chosen.body);
        const form = stripeApi.calls.at(-1)?.form ?? {};
        assert.deepEqual([form.mode, form["metadata[warden_plan]"], form["metadata[warden_account]"]], ["payment", plan, person.id]);
        const id = /cs_test_\w+$/.exec(chosen.headers.location as string)?.[0] as string;
        const metadata = { warden_tool: "tabmaster", warden_plan: plan, warden_account: person.id };
        const paid = paymentSession({ id, email, metadata, amount: plan === "lifetime" ? 4900 : 900, now: env.clock.now() });
        assert.equal(
          await deliver(apiOf(app), ws, webhookSecret, stripeEvent("checkout.session.completed", paid, { now: env.clock.now() }), env.clock.now()),
          "applied",
        );
      };
      await pay("lifetime");
      await pay("pack-1000");
      await pay("pack-1000");
      const credits = await env.services.db.selectFrom("meter_credits").select("amount").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(
        credits.map((c) => Number(c.amount)),
        [1000, 1000],
      );
      assert.equal(stripeApi.calls.length, 3);
    });

    test("a tool without meters or features shows plans as before; another workspace's terms and packs never show; names are escaped", async () => {
      const { env, ws, browser } = await setUp(dialect, seedUsageCatalogue);
      // Another workspace with the same plan ids, other terms and a pack of its own.
      const other = await seedUsageCatalogue(env.services);
      const theirs = { workspace: other.slug, tool: "tabmaster" };
      await addFeature(env.services.db, env.clock, { ...theirs, id: "secret", name: "Their secret feature" });
      await setPlanTerms(env.services.db, env.clock, { ...theirs, id: "lifetime", features: ["secret"], allowances: { summaries: 777 } });
      await createPlan(env.services.db, env.clock, { ...theirs, id: "pack-9", name: "Their pack", billing: "one_time", amountCents: 100, givesAccess: false });
      await setPlanTerms(env.services.db, env.clock, { ...theirs, id: "pack-9", credits: { summaries: 9 } });
      const page = (await browser.get(`${pagesOf(ws)}/plans`)).body;
      assert.match(card(page, "Lifetime"), /<li>100 summaries a month<\/li>/);
      // "777 summaries", not a bare 777: the page's random form token may hold those digits.
      assert.doesNotMatch(page, /777 summaries|Their secret feature|Their pack/);

      // Notepad declares nothing; Link Keeper gets the suite, whose terms are Tab Master's only.
      for (const tool of ["notepad", "linkkeeper"]) {
        if (tool === "notepad")
          await createPlan(env.services.db, env.clock, { workspace: ws.slug, tool, id: "np", name: "Notepad", billing: "one_time", amountCents: 700 });
        const plain = (await browser.get(`${pagesOf(ws, "test", tool)}/plans`)).body;
        assert.match(plain, /<p class="offer-gives-label">Gives you<\/p>/, tool);
        assert.doesNotMatch(plain, /Unlocks|Includes|Adds|Credit packs|id="packs"/, tool);
      }

      const tool = { workspace: ws.slug, tool: "tabmaster" };
      await addFeature(env.services.db, env.clock, { ...tool, id: "bold", name: '<b>Bold</b> & "co"' });
      await addMeter(env.services.db, env.clock, { ...tool, id: "pages", name: "<script>alert(1)</script>", unit: "<i>pages</i>" });
      await setPlanTerms(env.services.db, env.clock, { ...tool, id: "lifetime", features: ["bold"], allowances: { pages: 5 } });
      await setPlanTerms(env.services.db, env.clock, { ...tool, id: "pack-1000", credits: { summaries: 1000, pages: 3 } });
      await updateMeter(env.services.db, env.clock, { ...tool, id: "summaries", name: "Summaries & more" });
      const escaped = (await browser.get(`${pagesOf(ws)}/plans`)).body;
      assert.match(escaped, /<li>&lt;b&gt;Bold&lt;\/b&gt; &amp; &quot;co&quot;<\/li>/);
      assert.match(escaped, /<li>&lt;script&gt;alert\(1\)&lt;\/script&gt;: 5 &lt;i&gt;pages&lt;\/i&gt; a month<\/li>/);
      assert.match(escaped, /<li>&lt;script&gt;alert\(1\)&lt;\/script&gt;: 3 &lt;i&gt;pages&lt;\/i&gt;<\/li>/);
      assert.match(escaped, /<li>Summaries &amp; more: 1,000 summaries<\/li>/);
      assert.doesNotMatch(escaped, /<script>alert|<b>Bold|<i>pages/);
    });

    test("choosing a plan signed out goes to Stripe Checkout with Warden's return addresses; a bundle's plan names the bundle", async () => {
      const { base, browser, stripeApi } = await setUp(dialect);
      await browser.get(`${base}/plans`);
      const chosen = await browser.post(`${base}/plans`, { plan: "lifetime" });
      assert.equal(chosen.statusCode, 303, chosen.body);
      const [call] = stripeApi.calls;
      assert.match(chosen.headers.location as string, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
      assert.equal(call?.form.success_url, `https://warden.example.com${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`);
      assert.equal(call?.form.cancel_url, `https://warden.example.com${base}/plans`);
      assert.equal(call?.form["metadata[warden_tool]"], "tabmaster");
      assert.equal(call?.form.customer_email, undefined, "Stripe asks the address");
      assert.equal(call?.form["metadata[warden_account]"], undefined);

      const bundle = await browser.post(`${base}/plans`, { plan: "suite-lifetime", bundle: "suite" });
      assert.equal(bundle.statusCode, 303, bundle.body);
      const form = stripeApi.calls[1]?.form ?? {};
      assert.equal(form["metadata[warden_bundle]"], "suite");
      assert.equal(form["metadata[warden_tool]"], undefined);
      assert.equal(form["line_items[0][price_data][product_data][name]"], "Suite (Suite for life)");
      assert.equal(form["line_items[0][price_data][unit_amount]"], "9900");

      // Stripe Checkout speaks the page's language: English by default, Stripe's `zh` for Simplified Chinese.
      assert.equal(call?.form.locale, "en");
      await browser.get(`${base}/plans?lang=zh-CN`);
      assert.equal((await browser.post(`${base}/plans`, { plan: "lifetime" })).statusCode, 303);
      assert.equal(stripeApi.calls[2]?.form.locale, "zh");
    });

    test("signed in, the purchase names the person; the success page says it is being confirmed, then what was bought", async () => {
      const { env, app, ws, base, browser, stripeApi, webhookSecret } = await setUp(dialect);
      const email = `buyer-${ws.slug}@example.com`;
      await signInOnPages(browser, env.dataDir, base, email);
      const page = await browser.get(`${base}/plans`);
      assert.ok(page.body.includes(`You are signed in as <strong>${email}</strong>`));
      const toStripe = await browser.post(`${base}/plans`, { plan: "lifetime" });
      assert.equal(toStripe.statusCode, 303);
      const form = stripeApi.calls[0]?.form ?? {};
      assert.equal(form.customer_email, email);
      const person = await env.services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
      assert.equal(form["metadata[warden_account]"], person.id);

      const sessionId = /cs_test_\w+$/.exec(toStripe.headers.location as string)?.[0] as string;
      const success = `${base}/checkout/success?session_id=${sessionId}`;
      const waiting = await browser.get(success);
      assert.equal(waiting.statusCode, 200);
      assert.match(waiting.body, /Confirming your payment/);
      assert.ok(waiting.body.includes(`<a class="button primary" href="${base}/checkout/success?session_id=${sessionId}">Check again</a>`));
      assert.doesNotMatch(waiting.body, /http-equiv="refresh"/, "no reload on its own (docs/decisions.md)");

      const paid = paymentSession({
        id: sessionId,
        email,
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        now: env.clock.now(),
      });
      assert.equal(
        await deliver(apiOf(app), ws, webhookSecret, stripeEvent("checkout.session.completed", paid, { now: env.clock.now() }), env.clock.now()),
        "applied",
      );
      const done = await browser.get(success);
      assert.match(done.body, /<h1>Thank you<\/h1>/);
      assert.match(done.body, /You bought <strong>Tab Master \(Lifetime\)<\/strong>, paid once\./);
      assert.doesNotMatch(done.body, new RegExp(`${email}</p>`), "the session id shows no address beyond the shell's own");
      // Someone else signed in with the session id: nothing of the purchase, and a Paddle transaction id names nothing here.
      const other = new TestBrowser(app);
      await signInOnPages(other, env.dataDir, base, `other-${ws.slug}@example.com`);
      const notTheirs = await other.get(success);
      assert.equal(notTheirs.statusCode, 404);
      assert.match(notTheirs.body, /Checkout not recognised/);
      assert.doesNotMatch(notTheirs.body, /Lifetime/);
      assert.equal((await browser.get(`${base}/checkout/success?session_id=txn_01hv0000000000000000000000`)).statusCode, 404);

      // A session from a device activated with that licence's key acts for the licence only: it buys as signed out, starts no trial.
      const licence = await env.services.db.selectFrom("licences").select("id").where("checkout_session", "=", sessionId).executeTakeFirstOrThrow();
      const keyToken = await env.services.db
        .transaction()
        .execute((trx) =>
          openCustomerSession(trx, { workspaceId: ws.workspaceId, env: "test", personId: person.id, licenceId: licence.id, now: env.clock.now() }),
        );
      const keyBrowser = new TestBrowser(app);
      keyBrowser.cookies.set(`warden_customer_${ws.slug}_test`, keyToken);
      const keyPlans = await keyBrowser.get(`${base}/plans`);
      assert.doesNotMatch(keyPlans.body, new RegExp(email), "its holder's address is not shown");
      assert.equal((await keyBrowser.post(`${base}/plans`, { plan: "monthly" })).statusCode, 303);
      const keyForm = stripeApi.calls.at(-1)?.form ?? {};
      assert.equal(keyForm["metadata[warden_account]"], undefined);
      assert.equal(keyForm.customer_email, undefined);
      await updateTool(env.services.db, env.clock, { workspace: ws.slug, id: "tabmaster", trialDays: "7" });
      assert.match((await keyBrowser.get(`${base}/trial`)).body, /You are signed in with a licence key, which names no person/);

      // A subscription: its checkout names it, and its own event makes it.
      const subscription = `sub_${ws.slug.replaceAll("-", "")}`;
      const subSession = `cs_test_sub${ws.slug.replaceAll("-", "")}`;
      const metadata = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id };
      const now = env.clock.now();
      await deliver(
        apiOf(app),
        ws,
        webhookSecret,
        stripeEvent("checkout.session.completed", subscriptionSession({ id: subSession, email, subscription, metadata, now }), { now }),
        now,
      );
      const created = subscriptionObject({ id: subscription, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY });
      await deliver(apiOf(app), ws, webhookSecret, stripeEvent("customer.subscription.created", created, { now }), now);
      const renewing = await browser.get(`${base}/checkout/success?session_id=${subSession}`);
      assert.match(renewing.body, /You bought <strong>Tab Master \(Monthly\)<\/strong> as a subscription\./);
      assert.match(renewing.body, /It renews on <time/);
    });

    test("bad choices get a clear page and never reach Stripe: unknown, retired, another tool's or workspace's plan, a bundle without the tool, no payments", async () => {
      const { env, ws, base, browser, stripeApi } = await setUp(dialect);
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        tool: "linkkeeper",
        id: "lk-pro",
        name: "Link Keeper Pro",
        billing: "one_time",
        amountCents: 900,
      });
      await retirePlan(env.services.db, env.clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime" });
      const other = await seedCatalogue(env.services);
      await createPlan(env.services.db, env.clock, { workspace: other.slug, tool: "tabmaster", id: "gold", name: "Gold", billing: "one_time", amountCents: 1 });
      await browser.get(`${base}/plans`);
      // Whatever is wrong with it, the buyer reads that the plan is not on sale here, in the page's words (not the API's ids).
      const cases: [Record<string, string>, RegExp][] = [
        [{ plan: "nothing" }, /The plan &quot;nothing&quot; is not on sale for Tab Master\./],
        [{ plan: "lifetime" }, /The plan &quot;lifetime&quot; is not on sale for Tab Master\./],
        [{ plan: "lk-pro" }, /The plan &quot;lk-pro&quot; is not on sale for Tab Master\./],
        [{ plan: "gold" }, /The plan &quot;gold&quot; is not on sale for Tab Master\./],
        [{ plan: "suite-lifetime", bundle: "nothing" }, /The plan &quot;suite-lifetime&quot; is not on sale for Tab Master\./],
      ];
      for (const [fields, message] of cases) {
        const refused = await browser.post(`${base}/plans`, fields);
        assert.equal(refused.statusCode, 400, JSON.stringify(fields));
        assert.match(refused.body, message);
        assert.match(refused.body, /<div class="notice notice-error" role="alert">/);
      }
      // A bundle that does not give this tool, on its page.
      const notepad = pagesOf(ws, "test", "notepad");
      await browser.get(`${notepad}/plans`);
      assert.match(
        (await browser.post(`${notepad}/plans`, { plan: "suite-lifetime", bundle: "suite" })).body,
        /The plan &quot;suite-lifetime&quot; is not on sale for Notepad\./,
      );

      // Live has no Stripe: the page says so before anyone chooses, and a post is refused.
      const live = pagesOf(ws, "live");
      const livePage = await browser.get(`${live}/plans`);
      assert.match(livePage.body, /Test workspace takes no payments here yet/);
      assert.doesNotMatch(livePage.body, /<button class="button primary wide" type="submit"/);
      assert.doesNotMatch(livePage.headers["content-security-policy"] as string, /checkout\.stripe\.com/);
      // The page has no form to post; the browser's token (of its pre-session secret) still passes, and the use case refuses.
      assert.match(
        (await browser.post(`${live}/plans`, { plan: "monthly" })).body,
        /<div class="notice notice-error" role="alert">Test workspace takes no payments here yet: nothing can be bought/,
      );
      assert.equal(stripeApi.calls.length, 0);

      assert.equal((await browser.get(`${base}/checkout/success?session_id=javascript:alert(1)`)).statusCode, 400);
      assert.equal((await browser.get(`${base}/checkout/success`)).statusCode, 400);
      assert.equal((await browser.get(`/c/${ws.slug}/test/nothing/plans`)).statusCode, 404);
      assert.equal((await browser.get(`/c/nobody-here/test/tabmaster/plans`)).statusCode, 404);
    });

    test("the tool's default plan is listed first and marked Recommended; a bundle's default and the other plans are not", async () => {
      const { env, ws, base, browser } = await setUp(dialect);
      const before = await browser.get(`${base}/plans`);
      assert.doesNotMatch(before.body, /Recommended/, "no default plan, nothing recommended");
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        tool: "tabmaster",
        id: "yearly",
        name: "Yearly",
        billing: "subscription",
        amountCents: 4800,
        interval: "year",
        isDefault: true,
      });
      await createPlan(env.services.db, env.clock, {
        workspace: ws.slug,
        bundle: "suite",
        id: "suite-monthly",
        name: "Suite monthly",
        billing: "subscription",
        amountCents: 900,
        interval: "month",
        isDefault: true,
      });
      const page = await browser.get(`${base}/plans`);
      const names = [...page.body.matchAll(/<h2 class="offer-name" id="offer-\d+">([^<]+)<\/h2>/g)].map((m) => m[1]);
      assert.equal(names[0], "Yearly", "created last, listed first");
      assert.deepEqual(names.slice(1, 3).sort(), ["Lifetime", "Monthly"]);
      assert.match(page.body, /<h2 class="offer-name" id="offer-0">Yearly<\/h2>\s*<p class="offer-flag">Recommended<\/p>/);
      assert.equal(page.body.match(/Recommended/g)?.length, 1, "only the tool's own default");
      // A chosen offer says so instead.
      const chosen = await browser.get(`${base}/plans?plan=yearly`);
      assert.match(chosen.body, /id="offer-0">Yearly<\/h2>\s*<p class="offer-flag">Your choice<\/p>/);
      assert.doesNotMatch(chosen.body, /Recommended/);
    });

    test("a choice without the page's form token, or from another site, is refused before any checkout", async () => {
      const { base, browser, stripeApi } = await setUp(dialect);
      await browser.get(`${base}/plans`);
      const noToken = await browser.post(`${base}/plans`, { plan: "monthly", _csrf: "" });
      assert.equal(noToken.statusCode, 403);
      assert.match(noToken.headers["content-type"] as string, /^text\/html/);
      assert.equal((await browser.post(`${base}/plans`, { plan: "monthly" }, { "sec-fetch-site": "cross-site" })).statusCode, 403);
      assert.equal((await browser.post(`${base}/plans`, { plan: "monthly" }, { "sec-fetch-site": "", origin: "https://evil.example" })).statusCode, 403);
      const stranger = new TestBrowser(browser.app);
      assert.equal((await stranger.post(`${base}/plans`, { plan: "monthly", _csrf: browser.csrf })).statusCode, 403, "a token is the browser's own");
      assert.equal(stripeApi.calls.length, 0);
    });

    test("the Trial page: none offered, signed out, started once with its end date, ended; its form is guarded", async () => {
      const { env, ws, base, browser } = await setUp(dialect);
      assert.match((await browser.get(`${base}/trial`)).body, /Tab Master offers no free trial\./);
      await updateTool(env.services.db, env.clock, { workspace: ws.slug, id: "tabmaster", trialDays: "7" });
      const signedOut = await browser.get(`${base}/trial`);
      assert.match(signedOut.body, /Tab Master is free for 7 days, once per person/);
      assert.ok(signedOut.body.includes(`href="${base}/sign-in?return=${encodeURIComponent(`${base}/trial`)}"`));
      assert.equal((await browser.post(`${base}/trial`, {})).statusCode, 403, "no form token before sign-in: nothing to post");

      const email = `trial-${ws.slug}@example.com`;
      await signInOnPages(browser, env.dataDir, base, email);
      const offer = await browser.get(`${base}/trial`);
      assert.match(offer.body, /Start my 7-day trial/);
      assert.equal((await browser.post(`${base}/trial`, {}, { "sec-fetch-site": "cross-site" })).statusCode, 403);
      assert.equal((await browser.post(`${base}/trial`, { _csrf: "0".repeat(64) })).statusCode, 403);
      const started = await browser.post(`${base}/trial`, {});
      assert.equal(started.statusCode, 303);
      assert.equal(started.headers.location, `${base}/trial?started=1`);
      const shown = await browser.get(started.headers.location as string);
      assert.match(shown.body, /Your trial has started/);
      assert.ok(shown.body.includes('Your trial runs until <strong><time datetime="2026-11-28T12:00:00.000Z">'));
      const grants = await env.services.db.selectFrom("grants").select("kind").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(grants, [{ kind: "trial" }]);

      // Again: the same trial, no second one, and the page says it was running already rather than started.
      const repeat = await browser.post(`${base}/trial`, {});
      assert.equal(repeat.statusCode, 303);
      assert.equal(repeat.headers.location, `${base}/trial?running=1`);
      const running = await browser.get(repeat.headers.location as string);
      assert.doesNotMatch(running.body, /Your trial has started/);
      assert.ok(running.body.includes(`Your trial is already running, until <time datetime="2026-11-28T12:00:00.000Z">`));
      assert.equal((await env.services.db.selectFrom("grants").select("id").where("workspace_id", "=", ws.workspaceId).execute()).length, 1);

      // Past its end (and past the web session's life: signed in again).
      env.clock.advance(8 * DAY);
      await signInOnPages(browser, env.dataDir, base, email);
      const ended = await browser.get(`${base}/trial`);
      assert.match(ended.body, /Your trial has ended/);
      assert.match(ended.body, /A trial is given once per person\./);
      const again = await browser.post(`${base}/trial`, {});
      assert.equal(again.statusCode, 400, "a repeat after the end changes nothing and says so");
      assert.match(again.body, /Your trial has ended/);
      assert.equal((await env.services.db.selectFrom("grants").select("id").where("workspace_id", "=", ws.workspaceId).execute()).length, 1);
    });
  });
}
