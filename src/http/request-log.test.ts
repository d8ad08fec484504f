// One line per request at `info`; the hot routes' answered requests at `debug` only.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildApp } from "../app.js";
import { seedWorkspace, testServices } from "../test-support/harness.js";

describe("the request log", () => {
  for (const level of ["info", "debug"] as const) {
    test(`at ${level}: one line per request, a retrieve answered ${level === "info" ? "not logged" : "logged"}, a refusal always`, async () => {
      const { services } = await testServices("sqlite");
      const ws = await seedWorkspace(services);
      const lines: { msg: string; url?: string; statusCode?: number; level: number }[] = [];
      const app = await buildApp(services, { logger: { level, stream: { write: (line: string) => lines.push(JSON.parse(line)) } } });
      await app.ready();
      try {
        await app.inject({
          method: "POST",
          url: `/api/v1/tools/${ws.tool}/grants`,
          headers: { authorization: `Bearer ${ws.testKey}` },
          payload: { email: "log@example.com", days: 3 },
        });
        const found = await app.inject({ url: `/api/v1/tools/${ws.tool}/customers/log%40example.com`, headers: { authorization: `Bearer ${ws.testKey}` } });
        assert.equal(found.statusCode, 200);
        const refused = await app.inject({ url: `/api/v1/tools/${ws.tool}/customers/log%40example.com`, headers: { authorization: "Bearer wk_test_wrong" } });
        assert.equal(refused.statusCode, 401);
        const requests = lines.filter((l) => l.msg === "request completed");
        assert.deepEqual(
          requests.map((l) => [l.statusCode, l.url?.includes("/grants") ? "grant" : "retrieve"]),
          level === "info"
            ? [
                [201, "grant"],
                [401, "retrieve"],
              ]
            : [
                [201, "grant"],
                [200, "retrieve"],
                [401, "retrieve"],
              ],
        );
        assert.equal(lines.filter((l) => l.msg === "incoming request").length, 0, "no line on arrival");
        assert.ok(
          requests.every((l) => !l.url?.includes("log%40example.com")),
          "addresses are redacted in the line",
        );
      } finally {
        await app.close();
      }
    });
  }
});
