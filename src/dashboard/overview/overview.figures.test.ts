import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cancelSubscription } from "../../billing/subscription.service.js";
import { DAY_MS } from "../../clock.js";
import { ensurePerson } from "../../customers/person.store.js";
import { insertGrant } from "../../grants/grant.store.js";
import { newId, randomBase62 } from "../../ids.js";
import { OVERVIEW_DAYS, overviewInsights, peopleInsights, revenueInsights, subscriptionInsights, useInsights } from "../../insights/insights.service.js";
import type { InsightsQuery } from "../../insights/insights.types.js";
import { dashboardApp, dashboardServices, readCode, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, seedWorkspace, testApi, type Workspace } from "../../test-support/harness.js";
import { buyLicence, makeInsightsHistory } from "../../test-support/insights.js";
import { connectTestStripe, deliver, emittedEvents, paymentSession, stripeEvent } from "../../test-support/stripe.js";
import { createKey, createOwner, createPlan, createTool, createWorkspace } from "../../workspaces/workspace.service.js";

// The overview opens with Insights' own figures for the last 30 days, a setup checklist
// while a step is missing, and the latest purchases, cancellations and refunds.

const TODAY = Date.parse("2026-11-26T12:00:00Z");
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The text of a page without its tags, spaces folded: what a person reads. */
const text = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");

/** A setup step's list item, or null when the page does not show it. */
const stepOf = (body: string, step: string) => new RegExp(`<li class="checklist-step" id="step-${step}">(.*?)</li>`, "s").exec(body)?.[1] ?? null;

for (const dialect of DIALECTS) {
  describe(`dashboard overview: figures, checklist, recent activity (${dialect})`, () => {
    test("each figure is what its Insights page answers for the last 30 days, against the 30 before, and opens that page", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const { db } = env.services;
      // Before the window: a sale 40 days ago (the previous 30 days' revenue). Within it:
      // two trials 10 days ago, one bought within its days; then the history of the last three days.
      const early = await ensurePerson(db, ws.workspaceId, "test", `early@${ws.slug}.example.com`, TODAY - 40 * DAY_MS);
      await buyLicence(db, ws.workspaceId, early.id, "tool", "tabmaster", TODAY - 40 * DAY_MS, 2900);
      for (const [n, buys] of [
        [1, true],
        [2, false],
      ] as const) {
        const person = await ensurePerson(db, ws.workspaceId, "test", `trial${n}@${ws.slug}.example.com`, TODAY - 10 * DAY_MS);
        const at = TODAY - 10 * DAY_MS;
        await insertGrant(db, {
          id: newId("gr"),
          workspaceId: ws.workspaceId,
          env: "test",
          toolId: "tabmaster",
          personId: person.id,
          kind: "trial",
          startsAt: at,
          endsAt: at + 14 * DAY_MS,
          revokedAt: null,
          note: null,
          createdAt: at,
        });
        if (buys) await buyLicence(db, ws.workspaceId, person.id, "tool", "tabmaster", at + 3 * DAY_MS);
      }
      await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);

      const now = new Date(env.clock.now());
      const overview = await overviewInsights(env.services, { workspaceId: ws.workspaceId, env: "test" }, now);
      const q: InsightsQuery = {
        workspaceId: ws.workspaceId,
        env: "test",
        toolId: null,
        from: dayOf(TODAY - (OVERVIEW_DAYS - 1) * DAY_MS),
        to: dayOf(TODAY),
        grain: "day",
      };
      const [revenue, subscriptions, people, use] = await Promise.all([
        revenueInsights(db, q),
        subscriptionInsights(db, q),
        peopleInsights(db, q),
        useInsights(env.services, q, now),
      ]);
      const lastOf = (points: { value: number }[]) => points.at(-1)?.value;
      assert.deepEqual(overview, {
        from: q.from,
        to: q.to,
        mrr: subscriptions.currencies.map((c) => ({ currency: c.currency, value: lastOf(c.mrr.points), previous: lastOf(c.mrr.previous) })),
        netRevenue: revenue.currencies.map((c) => ({ currency: c.currency, value: c.net.total, previous: c.net.previousTotal })),
        newCustomers: { value: people.newCustomers.total, previous: people.newCustomers.previousTotal },
        trials: { started: people.trials.started, converted: people.trials.paidWithinTrial + people.trials.paidWithin30DaysAfter },
        activeToday: lastOf(use.activePeople.daily.points),
        activeThisWeek: lastOf(use.activePeople.weekly.points),
      });
      // And what those are for this history, so that the equality above is not of two empty answers.
      assert.deepEqual(overview.mrr, [{ currency: "eur", value: 500, previous: 0 }]);
      assert.deepEqual(overview.netRevenue, [{ currency: "eur", value: 4900 + 10400, previous: 2900 }]);
      assert.deepEqual(overview.trials, { started: 2, converted: 1 });
      assert.equal(overview.activeToday, 1);
      assert.equal(overview.activeThisWeek, 1);

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test`);
      assert.equal(page.statusCode, 200);
      const insights = `/dashboard/w/${ws.slug}/test/insights`;
      const card = (href: string, label: string) =>
        new RegExp(
          `<a class="stat stat-link" href="${href.replace(/[?]/g, "\\?")}"><span class="stat-label">${label}</span><span class="stat-value">([^<]*)</span><span class="stat-note">([^<]*)</span></a>`,
        ).exec(page.body);
      assert.deepEqual(card(`${insights}/subscriptions?tool=all&amp;range=30d`, "MRR, EUR")?.slice(1), ["€5.00", "up from none 30 days ago"]);
      assert.deepEqual(card(`${insights}/revenue?tool=all&amp;range=30d`, "Net revenue, 30 days, EUR")?.slice(1), [
        "€153.00",
        "+428% from €29.00 in the 30 days before",
      ]);
      assert.equal(card(`${insights}/people?tool=all&amp;range=30d`, "New customers, 30 days")?.[1], String(overview.newCustomers.value));
      assert.deepEqual(card(`${insights}/people?tool=all&amp;range=30d`, "Trials started, 30 days")?.slice(1), [
        "2",
        "1 converted: paid within the trial or the 30 days after",
      ]);
      assert.deepEqual(card(`${insights}/use?tool=all&amp;range=7d`, "People active today")?.slice(1), ["1", "1 in the last 7 days"]);
      // The Insights page the card opens shows the same figure for that range.
      const revenuePage = text((await browser.get(`${insights}/revenue?tool=all&range=30d`)).body);
      assert.match(revenuePage, /Net, EUR €153\.00 \+428% against €29\.00/);
    });

    test("recent activity: the latest purchases, cancellations and refunds, newest first, each with its customer's address (escaped) and amount, linked to the customer", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const history = await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);
      const subscription = (await emittedEvents(env.services, ws)).find((e) => e.type === "subscription.started");
      assert.ok(subscription?.type === "subscription.started");
      env.clock.set(TODAY + 60_000);
      await cancelSubscription(env.services, { id: subscription.data.subscription, now: false, workspace: ws.slug, env: "test" });
      // An address with characters HTML must escape; an example event is not activity.
      env.clock.set(TODAY + 120_000);
      const odd = `tom&o'neil@${ws.slug}.example.com`;
      const api = await testApi(env.services);
      const secret = await connectTestStripe(env.services, ws);
      const session = paymentSession({ email: odd, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, amount: 4900, now: env.clock.now() });
      await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: env.clock.now() }), env.clock.now());
      const example = await api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload: { type: "purchase.completed" } });
      assert.ok(example.statusCode < 300, example.body);

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const body = (await browser.get(`/dashboard/w/${ws.slug}/test`)).body;
      const table = /<section class="panel" aria-labelledby="activity-head">(.*?)<\/section>/s.exec(body)?.[1] ?? "";
      const rows = [
        ...table.matchAll(
          /<tr>\s*<td[^>]*><time[^>]*>[^<]*<\/time><\/td>\s*<td[^>]*>(.*?)<\/td>\s*<td[^>]*>(.*?)<\/td>\s*<td[^>]*>(.*?)<\/td>\s*<td class="num"[^>]*>(.*?)<\/td>/gs,
        ),
      ].map((m) => m.slice(1).map((cell) => cell.replace(/\s+/g, " ")));
      const customers = `/dashboard/w/${ws.slug}/test/customers`;
      const link = (tool: string, email: string, shown = email) => `<a href="${customers}/${tool}/${encodeURIComponent(email)}">${shown}</a>`;
      const linkOdd = `<a href="${customers}/tabmaster/${encodeURIComponent(odd).replace(/'/g, "&#39;")}">tom&amp;o&#39;neil@${ws.slug}.example.com</a>`;
      assert.deepEqual(rows.slice(0, 3), [
        ["Purchase", linkOdd, "<code>tabmaster:lifetime</code>", "€49.00"],
        ['Cancellation <span class="state-note">at period end</span>', link("tabmaster", history.subscriber), "<code>tabmaster:monthly</code>", "€5.00"],
        // A refund's event names no plan: its product.
        ["Refund", link("tabmaster", history.refunded), "<code>tabmaster</code>", "€49.00"],
      ]);
      // Yesterday's two purchases (the same instant, in either order), then the first one.
      assert.deepEqual(
        rows.slice(3, 5).sort(),
        [
          // A bundle's buyer: the customer list searching the address, as a customer page is a tool's.
          ["Purchase", `<a href="${customers}?q=${encodeURIComponent(history.buyer)}">${history.buyer}</a>`, "<code>suite:suite-lifetime</code>", "€99.00"],
          // A subscription's event has neither address nor amount: its person's, and its invoice paid.
          ["Purchase", link("tabmaster", history.subscriber), "<code>tabmaster:monthly</code>", "€5.00"],
        ].sort(),
      );
      assert.deepEqual(rows.slice(5), [["Purchase", link("tabmaster", history.refunded), "<code>tabmaster:lifetime</code>", "€49.00"]]);
      assert.ok(!body.includes(odd), "the address is escaped");

      // At most ten, the newest.
      for (let i = 0; i < 10; i++) {
        env.clock.set(TODAY + (3 + i) * 60_000);
        const more = paymentSession({
          email: `more${i}@${ws.slug}.example.com`,
          metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
          now: env.clock.now(),
        });
        await deliver(api, ws, secret, stripeEvent("checkout.session.completed", more, { now: env.clock.now() }), env.clock.now());
      }
      const later = (await browser.get(`/dashboard/w/${ws.slug}/test`)).body;
      const emails = [...later.matchAll(/>(more\d)@/g)].map((m) => m[1]);
      assert.deepEqual(emails, ["more9", "more8", "more7", "more6", "more5", "more4", "more3", "more2", "more1", "more0"]);
    });

    test("the checklist shows each missing step with where it is done, ticks each as it is done, and is gone once all are", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const { db, clock } = env.services;
      const ownerEmail = `owner-${randomBase62(8).toLowerCase()}@example.com`;
      await createOwner(db, clock, { email: ownerEmail });
      const slug = `new-${randomBase62(8).toLowerCase()}`;
      const created = await createWorkspace(db, clock, { slug, name: "New workspace", ownerEmail, plan: "pro" });
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ownerEmail);
      const overview = `/dashboard/w/${slug}/test`;
      const base = `/dashboard/w/${slug}`;
      const page = async () => (await browser.get(overview)).body;
      const todo = (body: string, step: string) => {
        const item = stepOf(body, step);
        assert.ok(item, `${step} is listed`);
        return item.includes("To do");
      };

      const first = await page();
      assert.match(first, /Set up this workspace/);
      assert.match(text(first), /5 of 5 steps left/);
      for (const [step, href] of [
        ["catalogue", `${base}/test/tools`],
        ["payments", `${base}/test/stripe`],
        ["webhook", `${base}/test/webhooks`],
        ["live-key", `${base}/live/keys`],
      ]) {
        assert.ok(todo(first, step as string), `${step} to do`);
        assert.match(stepOf(first, step as string) ?? "", new RegExp(`<a class="button small" href="${href}">`), `${step} links to where it is done`);
      }
      assert.ok(todo(first, "library"));
      assert.match(text(stepOf(first, "library") ?? ""), /README, section "The extension's side: the client API"/);
      // The empty figures say so rather than show zeros of nothing.
      assert.match(text(first), /MRR None No subscription has paid yet/);
      assert.match(text(first), /New customers, 30 days 0 no change: 0 in the 30 days before/);
      assert.match(text(first), /Recent activity .* Nothing yet/);

      await createTool(db, clock, { workspace: slug, id: "tabmaster", name: "Tab Master" });
      assert.ok(todo(await page(), "catalogue"), "a tool without a plan sells nothing");
      await createPlan(db, clock, { workspace: slug, tool: "tabmaster", id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900 });
      assert.ok(!todo(await page(), "catalogue"));

      const testKey = (await createKey(db, clock, { workspace: slug, env: "test" })).key;
      const ws: Workspace = { slug, workspaceId: created.id, ownerEmail, tool: "tabmaster", testKey, liveKey: "" };
      const api = await testApi(env.services);
      const secret = await connectTestStripe(env.services, ws);
      assert.ok(todo(await page(), "payments"), "connected, but no event received yet");
      // A test purchase sent from the command line (`warden admin stripe trigger purchase`) is not Stripe reaching Warden.
      const tried = paymentSession({ email: `tried@${slug}.example.com`, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: clock.now() });
      const triedEvent = stripeEvent("checkout.session.completed", tried, { now: clock.now(), id: "evt_warden_test_0123456789abcdefghijklmn" });
      assert.equal(await deliver(api, ws, secret, triedEvent, clock.now()), "applied");
      assert.ok(todo(await page(), "payments"), "a test purchase from the command line does not tick the step");
      const session = paymentSession({ email: `buyer@${slug}.example.com`, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: clock.now() });
      await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now());
      assert.ok(!todo(await page(), "payments"));
      assert.ok(todo(await browser.get(`${base}/live`).then((r) => r.body), "payments"), "live's payments are their own step");

      const added = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: testKey, payload: { url: "https://example.com/hook" } });
      assert.equal(added.statusCode, 201, added.body);
      assert.ok(!todo(await page(), "webhook"));

      assert.ok(todo(await page(), "live-key"), "a test key is not a live one");
      await createKey(db, clock, { workspace: slug, env: "live" });
      assert.ok(!todo(await page(), "live-key"));

      const user = `user@${slug}.example.com`;
      await api.request({ method: "POST", url: `/api/v1/tools/tabmaster/grants`, key: testKey, payload: { email: user, days: 30 } });
      const asked = await api.request({
        method: "POST",
        url: "/api/client/v1/sign-in",
        payload: { workspace: slug, tool: "tabmaster", email: user, env: "test" },
      });
      assert.equal(asked.statusCode, 200, asked.body);
      const verified = await api.request({
        method: "POST",
        url: "/api/client/v1/sign-in/verify",
        payload: {
          workspace: slug,
          tool: "tabmaster",
          email: user,
          env: "test",
          code: await readCode(env.dataDir, user),
          device: { name: "Laptop", platform: "chrome-mac" },
        },
      });
      assert.equal(verified.statusCode, 200, verified.body);
      const almost = await page();
      assert.ok(todo(almost, "library"), "signed in, no access check yet");
      assert.match(text(almost), /1 of 5 steps left/);
      const check = await api.request({ url: "/api/client/v1/tools/tabmaster/access", headers: { authorization: `Bearer ${verified.json().token}` } });
      assert.equal(check.statusCode, 200, check.body);

      const done = await page();
      assert.ok(!done.includes("Set up this workspace"), "every step done: no checklist");
      assert.equal(stepOf(done, "catalogue"), null);
    });

    test("another workspace's owner cannot open this overview: 404, as a workspace that does not exist, and nothing of it shown", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const history = await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);
      const stranger = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, stranger.ownerEmail);
      for (const path of [`/dashboard/w/${ws.slug}/test`, `/dashboard/w/${ws.slug}/live`]) {
        const answer = await browser.get(path);
        assert.equal(answer.statusCode, 404);
        assert.ok(!answer.body.includes(history.buyer) && !answer.body.includes("€"), "nothing of the workspace");
      }
      const missing = await browser.get(`/dashboard/w/no-such-${ws.slug}/test`);
      assert.equal(missing.statusCode, 404);
      // Their own overview shows none of the other workspace's activity or figures.
      const own = (await browser.get(`/dashboard/w/${stranger.slug}/test`)).body;
      assert.ok(!own.includes(history.buyer));
      assert.match(text(own), /MRR None/);
    });
  });
}
