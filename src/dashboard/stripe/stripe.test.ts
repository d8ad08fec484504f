import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import type { Services } from "../../services.js";
import { claimStripeEvent, setStripeEventOutcome } from "../../stripe/stripe-event.store.js";
import { findReconcile } from "../../stripe/stripe-reconcile.service.js";
import { dashboardApp, dashboardServices, readCode, readCodeMail, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, seedWorkspace } from "../../test-support/harness.js";
import { connectTestStripe, paymentSession, stripeEvent, stripeId } from "../../test-support/stripe.js";
import { startStripeApi } from "../../test-support/stripe-api.js";

const WEBHOOK_SECRET = "whsec_dashboardTest0123456789WXYZ";
const SECRET_KEY = "sk_test_dashboardSecretKey0123456789abcd";

/** The run a reconcile's answer points to, once its row says it ended: it goes on after the answer (waits bounded). */
async function runEnded(services: Services, workspace: string, location: string) {
  const id = /run=(rec_\w+)/.exec(location)?.[1] ?? "";
  for (let i = 0; i < 500; i++) {
    const run = await findReconcile(services, { workspace, env: "test", id });
    if (run.status !== "running") return run;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the reconcile did not end");
}

for (const dialect of DIALECTS) {
  describe(`dashboard Stripe (${dialect})`, () => {
    test("connect, see the secrets by their last four only, the URL to paste and the last event; disconnect", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/stripe`;
      const ingest = (secret: string) => {
        const event = stripeEvent(
          "checkout.session.completed",
          paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: env.clock.now() }),
          { now: env.clock.now() },
        );
        const payload = JSON.stringify(event);
        const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(env.clock.now() / 1000) });
        return app.inject({
          method: "POST",
          url: `/processor/stripe/${ws.slug}`,
          headers: { "content-type": "application/json", "stripe-signature": signature },
          payload,
        });
      };

      const fresh = await browser.get(page);
      assert.equal(fresh.statusCode, 200);
      assert.match(fresh.body, /Not receiving events/);
      assert.ok(fresh.body.includes(`value="http://127.0.0.1:8080/processor/stripe/${ws.slug}"`), "the URL to paste, on the public origin (here the default)");
      assert.ok(fresh.body.includes('<script src="/dashboard/assets/copy.js" defer></script>'));
      assert.equal(fresh.body.match(/<script/g)?.length, 1, "the one script, from this origin");
      assert.match(fresh.body, /<button type="button" class="button" data-copy="webhook-url" hidden>Copy<\/button>/);
      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 400, "not connected yet");

      const bad = await browser.post(page, { webhook_secret: "secret" });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /webhook-secret must be the endpoint&#39;s signing secret from Stripe, starting with whsec_\./);
      const liveKey = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: "sk_live_abcdefgh12345678" });
      assert.match(liveKey.body, /secret-key is a live mode key; the test environment needs a test mode key\./);
      assert.equal(await readMail(env.dataDir, ws.ownerEmail).then((m) => /confirm/.test(m ?? "")), false, "no code for a refused key");

      const connected = await browser.postWithCode(env.dataDir, ws.ownerEmail, page, { webhook_secret: WEBHOOK_SECRET });
      assert.equal(connected.statusCode, 303);
      const shown = await browser.get(connected.headers.location as string);
      // Receiving events and acting in Stripe are two states: the signing secret alone gives the first.
      assert.match(shown.body, /Warden now receives Stripe&#39;s events\. Without a secret key it cannot act in Stripe/);
      assert.match(
        shown.body,
        /<dt>Receiving events<\/dt><dd><span class="badge badge-pending">Not yet<\/span> <span class="state-note">the signing secret is stored, but no event has arrived/,
      );
      assert.match(
        shown.body,
        /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-off">No<\/span> <span class="state-note">no secret key: refunds and cancellations made in Warden change Warden only/,
      );
      assert.doesNotMatch(shown.body, /class="badge[^"]*">Connected</, "no one word for two states");
      assert.ok(shown.body.includes("whsec_…WXYZ"));
      assert.ok(!shown.body.includes(WEBHOOK_SECRET), "never in full");
      assert.match(shown.body, /No event received yet/);

      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 200);
      const after = await browser.get(page);
      assert.match(after.body, /<code>checkout\.session\.completed<\/code>/);
      assert.match(after.body, /badge-ok">Applied/);
      assert.match(after.body, /<dt>Receiving events<\/dt><dd><span class="badge badge-ok">Yes<\/span> <span class="state-note">last one <time/);

      // A secret key, as the signing secret, waits for a fresh code; a wrong one stores nothing.
      const asked = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: SECRET_KEY });
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Confirm it is you/);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      assert.match((await readCodeMail(env.dataDir, ws.ownerEmail)) ?? "", /change the Stripe secrets of Test workspace \(test\)/);
      const wrong = await browser.post(page, {
        webhook_secret: WEBHOOK_SECRET,
        secret_key: SECRET_KEY,
        confirm: "1",
        code: code === "000000" ? "111111" : "000000",
      });
      assert.equal(wrong.statusCode, 400);
      assert.match((await browser.get(page)).body, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-off">No/);
      const stored = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: SECRET_KEY, confirm: "1", code });
      assert.equal(stored.statusCode, 303);
      const withKey = await browser.get(page);
      assert.ok(withKey.body.includes("sk_test_…abcd"));
      assert.match(withKey.body, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-ok">Yes<\/span>/);
      assert.ok(!withKey.body.includes(SECRET_KEY));

      assert.match((await browser.get(`${page}/disconnect`)).body, /Disconnect Stripe\?/);
      const gone = await browser.post(`${page}/disconnect`);
      assert.equal(gone.statusCode, 303);
      assert.match((await browser.get(gone.headers.location as string)).body, /Stripe is disconnected/);
      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 400, "refused from the next delivery");
      // The live environment was never connected.
      assert.match((await browser.get(`/dashboard/w/${ws.slug}/live/stripe`)).body, /Not receiving events/);

      const audit = (await browser.get("/dashboard/audit")).body;
      assert.equal(audit.match(/Connected Stripe/g)?.length, 2);
      assert.match(audit, /Disconnected Stripe/);
      assert.match(audit, /<code>signing secret, secret key<\/code>/);
    });

    test("every event Stripe delivered, newest first, 50 a page, filtered by result, with the reason; another workspace's never", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const other = await seedWorkspace(env.services);
      const received = async (workspaceId: string, outcome: "applied" | "ignored", reason: string | null) => {
        const id = stripeId("evt");
        const at = env.clock.now();
        await claimStripeEvent(env.services.db, { workspaceId, env: "test" }, { id, type: "checkout.session.completed", stripeCreated: at, receivedAt: at });
        await setStripeEventOutcome(env.services.db, { workspaceId, env: "test" }, id, { outcome, reason });
        env.clock.advance(1_000);
        return id;
      };
      const ids: string[] = [];
      for (let i = 0; i < 52; i++) ids.push(await received(ws.workspaceId, i % 4 === 0 ? "ignored" : "applied", i % 4 === 0 ? "no Warden metadata" : null));
      const foreign = await received(other.workspaceId, "applied", null);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/stripe/events`;

      const first = await browser.get(page);
      assert.equal(first.statusCode, 200);
      const shown = (body: string) => [...body.matchAll(/<td[^>]*><code>(evt_[0-9A-Za-z]+)<\/code><\/td>/g)].map((m) => m[1]);
      assert.deepEqual(shown(first.body), [...ids].reverse().slice(0, 50), "newest first, 50");
      const older = /href="([^"]+)">Older events/.exec(first.body)?.[1]?.replaceAll("&amp;", "&");
      assert.ok(older);
      const second = await browser.get(older);
      assert.deepEqual(shown(second.body), [ids[1], ids[0]]);
      assert.doesNotMatch(second.body, /Older events/);
      assert.ok(!first.body.includes(foreign ?? "") && !second.body.includes(foreign ?? ""), "another workspace's events are not listed");

      const ignored = await browser.get(`${page}?outcome=ignored`);
      assert.deepEqual(shown(ignored.body), ids.filter((_, i) => i % 4 === 0).reverse());
      assert.match(
        ignored.body,
        /<span class="failure-plain">The event lacks what Warden needs to act on it<\/span> <code class="raw-detail">no Warden metadata<\/code>/,
      );
      // A cursor is bound to its filter; an unknown result is refused in words.
      const cursor = new URL(older, "http://x").searchParams.get("cursor") ?? "";
      assert.equal((await browser.get(`${page}?outcome=ignored&cursor=${encodeURIComponent(cursor)}`)).statusCode, 400);
      assert.match((await browser.get(`${page}?outcome=lost`)).body, /outcome must be one of applied, ignored, deferred/);
      assert.match((await browser.get(`/dashboard/w/${ws.slug}/live/stripe/events`)).body, /No event received yet/);
      // Another workspace's owner cannot read this one's.
      const stranger = new TestBrowser(app);
      await stranger.signIn(env.dataDir, other.ownerEmail);
      assert.equal((await stranger.get(page)).statusCode, 404);
    });

    test("link a Stripe price on the plan's page, check, then reconcile from the Stripe page: progress and result from the run's row", async () => {
      const stripeApi = await startStripeApi();
      const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/stripe`;
      const plan = `/dashboard/w/${ws.slug}/test/tools/tabmaster/plans/lifetime`;

      // Not connected with a key: no button, and a forged post is refused in words.
      await connectTestStripe(env.services, ws);
      assert.match((await browser.get(page)).body, /Reconciling reads Stripe's API with a secret key/);
      const keyless = await browser.post(`${page}/reconcile`, { dry_run: "0" });
      assert.equal(keyless.statusCode, 400);
      assert.match(keyless.body, /connect one \(warden admin stripe connect --secret-key/);
      await connectTestStripe(env.services, ws, "test", SECRET_KEY);

      assert.match((await browser.get(plan)).body, /No Stripe price or product is linked/);
      const malformed = await browser.post(`${plan}/stripe`, { stripe_id: "price <b>" });
      assert.equal(malformed.statusCode, 400);
      assert.match(malformed.body, /aria-invalid="true" aria-describedby="stripe_id-error"/);
      assert.ok(malformed.body.includes('value="price &lt;b&gt;"'), "what was typed comes back escaped");
      const linked = await browser.post(`${plan}/stripe`, { stripe_id: "price_extLifetime" });
      assert.equal(linked.statusCode, 303);
      assert.match((await browser.get(linked.headers.location as string)).body, /<code>price_extLifetime<\/code>/);

      const cy = paymentSession({ email: "cy@example.com", metadata: {}, now: env.clock.now() });
      const dee = paymentSession({ email: "dee@example.com", metadata: {}, now: env.clock.now() });
      stripeApi.lists.set("/v1/checkout/sessions", [dee, cy]);
      stripeApi.lists.set(`/v1/checkout/sessions/${cy.id}/line_items`, [{ id: stripeId("li"), price: { id: "price_extLifetime", product: "prod_ext" } }]);
      stripeApi.lists.set(`/v1/checkout/sessions/${dee.id}/line_items`, [{ id: stripeId("li"), price: { id: "price_<i>x</i>", product: "prod_x" } }]);
      const finished = (location: string) => runEnded(env.services, ws.slug, location);

      const checked = await browser.post(`${page}/reconcile`, { dry_run: "1" });
      assert.equal(checked.statusCode, 303);
      const dryRun = await finished(checked.headers.location as string);
      assert.deepEqual([dryRun.applied, dryRun.dryRun], [1, true]);
      const dry = (await browser.get(checked.headers.location as string)).body;
      assert.match(dry, /Would change: 1\. Mapped to no plan: 1\. Nothing was changed\./);
      assert.match(dry, /<td[^>]*>dee@example\.com<\/td>/);
      assert.ok(dry.includes("<code>price_&lt;i&gt;x&lt;/i&gt;</code>"), "Stripe's text is escaped");

      const ran = await browser.post(`${page}/reconcile`, { dry_run: "0" });
      assert.equal(ran.statusCode, 303);
      assert.equal((await finished(ran.headers.location as string)).applied, 1);
      const done = (await browser.get(ran.headers.location as string)).body;
      assert.match(done, /Changed: 1\./);
      assert.match(done, /<code>purchase\.completed<\/code>/);
      const licences = await env.services.db.selectFrom("licences").select("plan_id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(licences, [{ plan_id: "lifetime" }]);
      const audit = (await browser.get("/dashboard/audit")).body;
      assert.equal(audit.match(/Reconciled with Stripe/g)?.length, 2);
      assert.match(audit, /Changed a plan&#39;s Stripe prices/);
    });

    test("a reconcile Stripe stops says why in words, Stripe's answer under them; the key it refused is no longer 'can act'", async () => {
      const stripeApi = await startStripeApi();
      const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/stripe`;
      await connectTestStripe(env.services, ws, "test", SECRET_KEY);
      env.clock.advance(60_000);
      await browser.get(page);

      // A key rolled in Stripe: Stripe answers 401 to every call.
      stripeApi.failWith = { status: 401, error: { type: "invalid_request_error", message: "Invalid API Key provided: sk_test_****abcd" } };
      const ran = await browser.post(`${page}/reconcile`, { dry_run: "1" });
      assert.equal(ran.statusCode, 303);
      assert.equal((await runEnded(env.services, ws.slug, ran.headers.location as string)).status, "failed");
      const failed = (await browser.get(ran.headers.location as string)).body;
      const plain = /<p class="failure-plain">(.*?)<\/p>/s.exec(failed)?.[1] ?? "";
      assert.match(
        plain,
        /^<strong>It stopped\.<\/strong> Stripe did not accept the secret key stored here: it was rolled, has expired or was deleted in Stripe\./,
      );
      assert.match(plain, /What it had applied stays/);
      assert.doesNotMatch(plain, /Invalid API Key/, "Stripe's message is not the headline");
      assert.match(failed, /<p class="raw-detail">What was recorded: <code>Invalid API Key provided: sk_test_\*\*\*\*abcd<\/code><\/p>/);
      assert.match(
        failed,
        /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-failing">Key refused<\/span> <span class="state-note">Stripe refused this secret key <time[^>]*>[^<]*<\/time>, so refunds and cancellations made here fail until you <a href="#secrets">store the current one<\/a>/,
      );
      assert.match(failed, /<section class="panel" id="secrets">/);

      // A restricted key without a permission: its own words, and the key is not called refused.
      const permission =
        "The provided key 'rk_test_****abcd' does not have the required permissions for this endpoint on account 'acct_1'. Having the 'rak_checkout_session_read' permission would allow this request to continue.";
      stripeApi.failWith = { status: 403, error: { type: "invalid_request_error", message: permission } };
      env.clock.advance(1000);
      const again = await browser.post(`${page}/reconcile`, { dry_run: "1" });
      await runEnded(env.services, ws.slug, again.headers.location as string);
      const limited = (await browser.get(again.headers.location as string)).body;
      assert.match(limited, /<p class="failure-plain"><strong>It stopped\.<\/strong> The restricted key stored here is not allowed to do this/);
      assert.ok(limited.includes("rak_checkout_session_read"), "Stripe's answer names the permission");
      assert.match(limited, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-ok">Yes<\/span>/);

      // A new key stored after a refusal is not blamed for it.
      stripeApi.failWith = { status: 401, error: { type: "invalid_request_error", message: "Invalid API Key provided: sk_test_****abcd" } };
      env.clock.advance(1000);
      const refused = await browser.post(`${page}/reconcile`, { dry_run: "1" });
      await runEnded(env.services, ws.slug, refused.headers.location as string);
      assert.match((await browser.get(page)).body, /Key refused/);
      env.clock.advance(60_000);
      await connectTestStripe(env.services, ws, "test", "sk_test_dashboardNewKey0123456789abcd");
      assert.match((await browser.get(page)).body, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-ok">Yes<\/span>/);
    });
  });
}
