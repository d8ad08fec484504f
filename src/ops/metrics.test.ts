import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { directSqlite, openStorage } from "../db/database.js";
import { createPgSchema, DIALECTS, PG_URL, seedCatalogue, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { startReceiver, testWorker } from "../test-support/webhooks.js";
import { Metrics } from "./metrics.js";

const TOKEN = "metrics-token-0123456789";
const bearer = { authorization: `Bearer ${TOKEN}` };

/** The value of one series in the text exposition, or undefined when it is absent. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const dialect of DIALECTS) {
  describe(`GET /metrics (${dialect})`, () => {
    test("without WARDEN_METRICS_TOKEN there is no metrics route: 404 in the error shape", async () => {
      const { services } = await testServices(dialect);
      const api = await testApi(services);
      const response = await api.app.inject({ method: "GET", url: "/metrics", headers: bearer });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.type, "not_found");
    });

    test("the token is required and checked: none or a wrong one answers 401, an API key too", async () => {
      const { services } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }, { authorization: `Bearer ${ws.testKey}` }]) {
        const response = await api.app.inject({ method: "GET", url: "/metrics", headers });
        assert.equal(response.statusCode, 401, JSON.stringify(headers));
        assert.equal(response.json().error.type, "authentication_error");
        assert.doesNotMatch(response.body, /warden_http/);
      }
      const ok = await api.app.inject({ method: "GET", url: "/metrics", headers: bearer });
      assert.equal(ok.statusCode, 200);
      assert.match(String(ok.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
    });

    test("requests are counted by route pattern and status, never by raw URL; limit refusals by limit", async () => {
      const { services } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN, WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "2" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const retrieve = (email: string) => api.request({ method: "GET", url: `/api/v1/tools/${ws.tool}/customers/${email}`, key: ws.testKey });
      // Nobody holds the tool: each lookup answers 404, until the key's third request in the minute.
      assert.equal((await retrieve("ada@example.com")).statusCode, 404);
      assert.equal((await retrieve("bob@example.com")).statusCode, 404);
      assert.equal((await retrieve("cy@example.com")).statusCode, 429);
      await api.request({ method: "GET", url: "/no/such/route" });

      const text = (await api.app.inject({ method: "GET", url: "/metrics", headers: bearer })).body;
      const route = "/api/v1/tools/:tool/customers/:email";
      assert.equal(seriesValue(text, `warden_http_requests_total{method="GET",route="${route}",status="404"}`), 2);
      assert.equal(seriesValue(text, `warden_http_requests_total{method="GET",route="${route}",status="429"}`), 1);
      assert.equal(seriesValue(text, `warden_http_request_duration_seconds_count{method="GET",route="${route}",status="404"}`), 2);
      assert.equal(seriesValue(text, 'warden_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
      assert.equal(seriesValue(text, 'warden_limit_refusals_total{limit="key-requests"}'), 1);
      assert.doesNotMatch(text, /example\.com|no\/such/);
    });

    test("a plan limit's 403 is counted under its limit", async () => {
      const { services } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN, WARDEN_LIMIT_HOBBY_PASSES: "1" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      const api = await testApi(services);
      const grant = (email: string) => api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } });
      assert.equal((await grant("ada@example.com")).statusCode, 201);
      assert.equal((await grant("bob@example.com")).statusCode, 403);
      const text = (await api.app.inject({ method: "GET", url: "/metrics", headers: bearer })).body;
      assert.equal(seriesValue(text, 'warden_limit_refusals_total{limit="hobby-passes"}'), 1);
    });

    test("webhook attempts by result, the delivery lag, and the backlog gauges read at the scrape", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const scrape = async () => (await api.app.inject({ method: "GET", url: "/metrics", headers: bearer })).body;
      const receiver = await startReceiver();
      const created = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: receiver.url } });
      assert.equal(created.statusCode, 201, created.body);
      const before = seriesValue(await scrape(), "warden_webhook_deliveries_pending") ?? 0;
      assert.equal(
        (await api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload: { type: "payment.refunded" } })).statusCode,
        202,
      );
      assert.equal(seriesValue(await scrape(), "warden_webhook_deliveries_pending"), before + 1);

      // The receiver answers 2.5 s (by the test's clock) after the event was written.
      clock.advance(2_500);
      const worker = testWorker(services);
      await worker.drain();
      let text = await scrape();
      assert.equal(seriesValue(text, 'warden_webhook_attempts_total{result="succeeded"}'), 1);
      assert.equal(seriesValue(text, "warden_webhook_delivery_lag_seconds_count"), 1);
      assert.equal(seriesValue(text, 'warden_webhook_delivery_lag_seconds_bucket{le="1"}'), 0);
      assert.equal(seriesValue(text, 'warden_webhook_delivery_lag_seconds_bucket{le="2.5"}'), 1);
      assert.equal(seriesValue(text, "warden_webhook_deliveries_pending"), before);

      // A receiver that answers 500: a failed attempt, a retrying delivery, a failing endpoint.
      receiver.handle = (_request, response) => {
        response.writeHead(500).end();
      };
      const failingBefore = seriesValue(text, "warden_webhook_endpoints_failing") ?? 0;
      assert.equal(
        (await api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload: { type: "payment.refunded" } })).statusCode,
        202,
      );
      await worker.drain();
      text = await scrape();
      assert.equal(seriesValue(text, 'warden_webhook_attempts_total{result="failed"}'), 1);
      assert.equal(seriesValue(text, "warden_webhook_delivery_lag_seconds_count"), 1);
      assert.equal(seriesValue(text, "warden_webhook_endpoints_failing"), failingBefore + 1);
      assert.ok((seriesValue(text, "warden_webhook_deliveries_retrying") ?? 0) >= 1);
      assert.deepEqual(worker.errors, []);
    });

    test("Stripe events are counted by type and result", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const event = stripeEvent(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }),
        { now },
      );
      assert.equal(await deliver(api, ws, secret, event, now), "applied");
      assert.equal(await deliver(api, ws, secret, event, now), "duplicate");
      const text = (await api.app.inject({ method: "GET", url: "/metrics", headers: bearer })).body;
      assert.equal(seriesValue(text, 'warden_stripe_events_total{type="checkout.session.completed",result="applied"}'), 1);
      assert.equal(seriesValue(text, 'warden_stripe_events_total{type="checkout.session.completed",result="duplicate"}'), 1);
    });

    test(`pool gauges ${dialect === "postgres" ? "report the pool" : "are absent: SQLite has no pool"}`, async () => {
      const { services } = await testServices(dialect, { WARDEN_METRICS_TOKEN: TOKEN });
      const api = await testApi(services);
      const text = (await api.app.inject({ method: "GET", url: "/metrics", headers: bearer })).body;
      if (dialect === "sqlite") {
        assert.equal(seriesValue(text, "warden_db_pool_connections"), undefined);
        return;
      }
      assert.ok((seriesValue(text, "warden_db_pool_connections") ?? 0) >= 1);
      assert.equal(typeof seriesValue(text, "warden_db_pool_idle"), "number");
      assert.equal(typeof seriesValue(text, "warden_db_pool_waiting"), "number");
    });

    test("failed statements are counted, through the query builder and (SQLite) the direct path", async () => {
      let errors = 0;
      const storage =
        dialect === "sqlite"
          ? openStorage({ databaseUrl: null, sqliteFile: ":memory:", onStatementError: () => errors++ })
          : openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 1, onStatementError: () => errors++ });
      try {
        await assert.rejects(sql`select * from no_such_table`.execute(storage.db));
        assert.equal(errors, 1);
        await sql`select 1`.execute(storage.db);
        assert.equal(errors, 1);
        const direct = directSqlite(storage.db);
        if (direct) {
          assert.throws(() => direct("select * from no_such_table", []));
          assert.equal(errors, 2);
        }
      } finally {
        await storage.close();
      }
    });
  });
}

test("each services' metrics live on a registry of their own, not prom-client's global one", async () => {
  const { register } = await import("prom-client");
  const first = await testServices("sqlite");
  const second = await testServices("sqlite");
  // The services' own Metrics (the tests' services keep their figures): its registry.
  assert.ok(first.services.metrics instanceof Metrics && second.services.metrics instanceof Metrics);
  assert.notEqual(first.services.metrics.registry, second.services.metrics.registry);
  assert.equal(register.getSingleMetric("warden_http_requests_total"), undefined);
});

test("the request histogram is written as Prometheus reads one: cumulative buckets, +Inf, sum and count, label values escaped", async () => {
  const metrics = new Metrics();
  metrics.countRequest("GET", "/a", 200, 0.0004);
  metrics.countRequest("GET", "/a", 200, 0.003);
  metrics.countRequest("GET", "/a", 200, 10);
  metrics.countRequest("POST", '/b"\\\n', 201, 0.0005);
  const text = await metrics.render();
  const a = 'method="GET",route="/a",status="200"';
  assert.equal(seriesValue(text, `warden_http_requests_total{${a}}`), 3);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_bucket{le="0.0005",${a}}`), 1);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_bucket{le="0.001",${a}}`), 1);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_bucket{le="0.005",${a}}`), 2);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_bucket{le="5",${a}}`), 2);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_bucket{le="+Inf",${a}}`), 3);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_sum{${a}}`), 10.0034);
  assert.equal(seriesValue(text, `warden_http_request_duration_seconds_count{${a}}`), 3);
  // A bucket's bound is inclusive; a label's quote, backslash and line feed are escaped.
  assert.equal(seriesValue(text, 'warden_http_request_duration_seconds_bucket{le="0.0005",method="POST",route="/b\\"\\\\\\n",status="201"}'), 1);
  assert.equal(text.match(/^# TYPE warden_http_request_duration_seconds histogram$/gm)?.length, 1);
  assert.match(
    text,
    /\n\n# HELP warden_http_requests_total [^\n]+\n# TYPE warden_http_requests_total counter\n/,
    "parted from prom-client's figures by an empty line",
  );
  assert.ok(text.endsWith(" 1\n"));
});
