// The requests of the outside probe that found Warden's faults, kept as they were sent:
// the fuzzer finds such things by chance, these find them every run.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import { buildApp } from "../src/app.js";
import { DIALECTS, seedCatalogue, seedWorkspace, testServices } from "../src/test-support/harness.js";
import { connectTestStripe, paymentSession, stripeEvent } from "../src/test-support/stripe.js";
import { problemsWith } from "./fault-support.js";

async function probeApp(dialect: (typeof DIALECTS)[number], env: Record<string, string> = {}) {
  const { services } = await testServices(dialect, env);
  const app = await buildApp(services, { logger: false });
  await app.ready();
  return { services, app };
}

for (const dialect of DIALECTS) {
  describe(`the outside probe's requests (${dialect})`, () => {
    test("a key used at another workspace's address is refused, with or without a trailing dot or capitals in the Host", async () => {
      const { services, app } = await probeApp(dialect);
      const a = await seedWorkspace(services);
      const b = await seedWorkspace(services);
      for (const host of [`${b.slug}.warden.test`, `${b.slug}.warden.test.`, `${b.slug.toUpperCase()}.WARDEN.TEST.`, `${b.slug}.warden.test.:443`]) {
        const r = await app.inject({ url: `/api/v1/tools/${a.tool}/customers`, headers: { host, authorization: `Bearer ${a.testKey}` } });
        assert.equal(r.statusCode, 401, `Host ${host}: ${r.statusCode} ${r.body}`);
        assert.deepEqual(problemsWith({ status: r.statusCode, headers: r.headers, body: r.body }), []);
      }
    });

    test("a NUL anywhere in a customer's address or a grant query is never a 5xx", async () => {
      const { services, app } = await probeApp(dialect);
      const ws = await seedWorkspace(services);
      for (const url of [
        `/api/v1/tools/${ws.tool}/customers/a%00b%40example.com`,
        `/api/v1/tools/${ws.tool}/customers/%00`,
        `/api/v1/tools/${ws.tool}/grants?email=a%00b%40example.com`,
        `/api/v1/tools/${ws.tool}/grants/gr_%00`,
        "/api/v1/webhooks/endpoints/%00",
        "/api/v1/webhooks/deliveries/%00",
        `/api/v1/tools/${ws.tool}%00/customers`,
      ]) {
        const r = await app.inject({ url, headers: { authorization: `Bearer ${ws.testKey}` } });
        // No such address can exist: a 4xx, or an empty answer, but never a fault.
        assert.deepEqual(problemsWith({ status: r.statusCode, headers: r.headers, body: r.body }), [], `${url}: ${r.statusCode} ${r.body}`);
      }
    });

    test("the Kelvin sign is not a spelling of k: it never finds the holder of the address written with k", async () => {
      const { services, app } = await probeApp(dialect);
      const ws = await seedWorkspace(services);
      const email = `kate-${ws.slug}@example.com`;
      const made = await app.inject({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        headers: { authorization: `Bearer ${ws.testKey}` },
        payload: { email },
      });
      assert.equal(made.statusCode, 201, made.body);
      const lookalike = `\u212Aate-${ws.slug}@example.com`;
      const r = await app.inject({
        url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(lookalike)}`,
        headers: { authorization: `Bearer ${ws.testKey}` },
      });
      assert.deepEqual(problemsWith({ status: r.statusCode, headers: r.headers, body: r.body }), []);
      assert.ok(!(r.statusCode === 200 && r.json().entitled === true), `the look-alike was answered as the holder: ${r.body}`);
    });

    test("the docs' static files: NUL is a 4xx, and no .. reaches a file outside their folder", async () => {
      const { app } = await probeApp(dialect);
      const outside = [
        "/api/v1/docs/static/..%2f..%2fpackage.json",
        "/api/v1/docs/static/..%2f..%2f..%2f..%2fpackage.json",
        "/api/v1/docs/static/%2e%2e%2f%2e%2e%2fpackage.json",
      ];
      const nul = ["/api/v1/docs/static/%00", "/api/v1/docs/static/a%00b"];
      // These name the docs' own folder: whatever they answer, the promises hold.
      const inside = ["/api/v1/docs/static/..", "/api/v1/docs/static/%2e%2e"];
      const failures: string[] = [];
      for (const url of [...outside, ...nul, ...inside]) {
        const r = await app.inject({ url });
        const problems = problemsWith({ status: r.statusCode, headers: r.headers, body: r.body });
        if (!inside.includes(url) && !(r.statusCode >= 400 && r.statusCode < 500)) problems.push(`status ${r.statusCode}, not a 4xx`);
        if (/"dependencies"|"devDependencies"/.test(r.body)) problems.push("package.json served");
        if (problems.length > 0) failures.push(`${url}: ${problems.join(", ")}`);
      }
      assert.deepEqual(failures, []);
    });

    test("a signed Stripe checkout with an amount of 1e300 is not a 5xx", async () => {
      const { services, app } = await probeApp(dialect);
      const ws = await seedCatalogue(services);
      const secret = await connectTestStripe(services, ws);
      const session = { ...paymentSession({ email: "big@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: Date.now() }) };
      const payload = JSON.stringify(stripeEvent("checkout.session.completed", session, { now: Date.now() })).replace(
        /"amount_total":\d+/,
        '"amount_total":1e300',
      );
      const signed = await app.inject({
        method: "POST",
        url: `/processor/stripe/${ws.slug}`,
        headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret }) },
        payload,
      });
      assert.deepEqual(
        problemsWith({ status: signed.statusCode, headers: signed.headers, body: signed.body }),
        [],
        `1e300: ${signed.statusCode} ${signed.body}`,
      );
    });

    test("a forged Stripe signature is refused without the library's words", async () => {
      const { services, app } = await probeApp(dialect);
      const ws = await seedCatalogue(services);
      await connectTestStripe(services, ws);
      const payload = JSON.stringify(
        stripeEvent("checkout.session.completed", paymentSession({ email: "f@example.com", metadata: {}, now: Date.now() }), { now: Date.now() }),
      );
      const forged = await app.inject({
        method: "POST",
        url: `/processor/stripe/${ws.slug}`,
        headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_forged" }) },
        payload,
      });
      assert.equal(forged.statusCode, 400, forged.body);
      assert.deepEqual(problemsWith({ status: forged.statusCode, headers: forged.headers, body: forged.body }), [], forged.body);
      assert.doesNotMatch(forged.body, /stripe\.com|No signatures found|expected signature|payload/i);
    });

    test("a CORS preflight without Access-Control-Request-Method is refused in the error shape", async () => {
      const { app } = await probeApp(dialect);
      const r = await app.inject({
        method: "OPTIONS",
        url: "/api/client/v1/devices",
        headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" },
      });
      assert.deepEqual(problemsWith({ status: r.statusCode, headers: r.headers, body: r.body }), [], `${r.statusCode} ${r.body}`);
    });

    // An IPv4-mapped IPv6 address reaches the IPv4 address it holds (refused already before the probe).
    test("a webhook URL that hides a private IPv4 address in an IPv4-mapped IPv6 one is refused like the address itself", async () => {
      await assertRefusedWebhookUrls(dialect, [
        "http://127.0.0.1/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[::ffff:7f00:1]/hook",
        "http://[::ffff:10.0.0.1]/hook",
        "http://[::ffff:c0a8:101]/hook",
        "http://[::ffff:169.254.169.254]/hook",
      ]);
    });

    // The probe's finding: other ways IPv6 carries an IPv4 address were accepted. The
    // deprecated IPv4-compatible form, and the NAT64 well-known prefix, which a NAT64
    // gateway on the operator's network forwards to the IPv4 address inside.
    test("a webhook URL with a private IPv4 address in an IPv4-compatible or NAT64 IPv6 address is refused", async () => {
      await assertRefusedWebhookUrls(dialect, [
        "http://[::127.0.0.1]/hook",
        "http://[::10.0.0.1]/hook",
        "http://[64:ff9b::a00:1]/hook",
        "http://[64:ff9b::7f00:1]/hook",
      ]);
    });
  });
}

async function assertRefusedWebhookUrls(dialect: (typeof DIALECTS)[number], urls: string[]): Promise<void> {
  const { services, app } = await probeApp(dialect, { WARDEN_ALLOW_PRIVATE_WEBHOOKS: "0" });
  const ws = await seedWorkspace(services);
  const accepted: string[] = [];
  for (const url of urls) {
    const r = await app.inject({ method: "POST", url: "/api/v1/webhooks/endpoints", headers: { authorization: `Bearer ${ws.testKey}` }, payload: { url } });
    if (r.statusCode !== 400 || r.json().error?.param !== "url") accepted.push(`${url}: ${r.statusCode}`);
  }
  assert.deepEqual(accepted, []);
}
