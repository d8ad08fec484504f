import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { buildApp } from "../app.js";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { openStorage } from "../db/database.js";
import { createServices } from "../services.js";
import { createPgSchema, DIALECTS, PG_URL, testApi, testServices, unique } from "../test-support/harness.js";

for (const dialect of DIALECTS) {
  describe(`health checks (${dialect})`, () => {
    test("/healthz and /readyz answer 200 without an API key, and are not in the vendor's API document", async () => {
      const { services } = await testServices(dialect);
      const api = await testApi(services);
      const health = await api.app.inject({ method: "GET", url: "/healthz" });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: "ok" });
      const ready = await api.app.inject({ method: "GET", url: "/readyz" });
      assert.equal(ready.statusCode, 200, ready.body);
      assert.deepEqual(ready.json(), { status: "ready" });
      assert.equal(ready.headers["cache-control"], "no-store");
      const doc = (await api.app.inject({ method: "GET", url: "/api/v1/openapi.json" })).json();
      for (const path of ["/healthz", "/readyz", "/metrics"]) assert.equal(doc.paths[path], undefined, path);
    });

    test("the health routes log nothing at info, and are counted against no limit", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "1", WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "1" });
      const app = await buildApp(services, { logger: false });
      await app.ready();
      try {
        for (let i = 0; i < 5; i++) {
          assert.equal((await app.inject({ method: "GET", url: "/healthz", headers: { authorization: "Bearer wk_test_wrong" } })).statusCode, 200);
          assert.equal((await app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
        }
      } finally {
        await app.close();
      }
      const routes = app.printRoutes({ includeMeta: ["logLevel"] });
      for (const path of ["healthz", "readyz", "metrics"]) assert.match(routes, new RegExp(`${path} \\(GET, HEAD\\)\\n.*\\(logLevel\\) "warn"`), path);
    });

    test("/readyz answers 503 with the reason while the database has a migration this code does not know, within a second", async () => {
      const { services, clock } = await testServices(dialect);
      const api = await testApi(services);
      assert.equal((await api.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
      const name = `999-${unique("future")}`;
      await sql`insert into warden_migrations (name, applied_at) values (${name}, ${clock.now()})`.execute(services.db);
      try {
        // An answer serves for a second: an orchestrator polling every second costs one query a second.
        assert.equal((await api.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
        clock.advance(1_000);
        const stale = await api.app.inject({ method: "GET", url: "/readyz" });
        assert.equal(stale.statusCode, 503);
        assert.equal(stale.json().error.type, "api_error");
        assert.match(stale.json().error.message, new RegExp(`^Not ready: the database has migrations this version does not know \\(${name}\\)`));
      } finally {
        await sql`delete from warden_migrations where name = ${name}`.execute(services.db);
      }
      clock.advance(1_000);
      assert.equal((await api.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
      assert.equal((await api.app.inject({ method: "GET", url: "/healthz" })).statusCode, 200);
    });

    test("/readyz answers 503 when the database does not answer; /healthz still 200", async () => {
      const storage =
        dialect === "sqlite"
          ? openStorage({ databaseUrl: null, sqliteFile: ":memory:" })
          : openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
      const clock = new ManualClock();
      const config = parseConfig({ WARDEN_SECRET_KEY: "health-test-secret-key-0123456789abcdef" });
      const services = await createServices(config, { clock, storage });
      const app = await buildApp(services, { logger: false });
      try {
        assert.equal((await app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
        await storage.close();
        clock.advance(1_000);
        const down = await app.inject({ method: "GET", url: "/readyz" });
        assert.equal(down.statusCode, 503);
        assert.deepEqual(down.json(), { error: { type: "api_error", message: "Not ready: the database does not answer." } });
        assert.equal((await app.inject({ method: "GET", url: "/healthz" })).statusCode, 200);
      } finally {
        await app.close();
      }
    });
  });
}
