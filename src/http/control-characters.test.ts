import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../test-support/harness.js";

function assertRefused(response: LightMyRequestResponse, param: string): void {
  assert.equal(response.statusCode, 400, response.body);
  const { error } = response.json();
  assert.equal(error.type, "invalid_request_error");
  assert.equal(error.param, param, response.body);
  assert.match(error.message, /NUL|control characters/);
  assert.match(String(response.headers["request-id"]), /^req_/);
}

for (const dialect of DIALECTS) {
  describe(`control characters in requests (${dialect})`, () => {
    test("a NUL anywhere in a vendor API request answers 400 naming the parameter, on both engines", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const base = `/api/v1/tools/${ws.tool}`;
      const get = (url: string) => api.request({ url, key: ws.testKey });

      assertRefused(await get(`${base}/customers/a%00b%40example.com`), "email");
      assertRefused(await get(`/api/v1/tools/tab%00master/customers/a%40example.com`), "tool");
      assertRefused(await get(`${base}/grants?email=a%00b%40example.com`), "email");
      assertRefused(await get(`${base}/customers?cursor=ab%00c`), "cursor");
      assertRefused(await api.request({ method: "DELETE", url: `${base}/grants/gr_%00`, key: ws.testKey }), "id");
      assertRefused(await get("/api/v1/webhooks/endpoints/ep_%00"), "id");
      assertRefused(await get("/api/v1/webhooks/events?type=purchase.%00completed"), "type");
      assertRefused(await get("/api/v1/webhooks/deliveries?endpoint=ep_%00"), "endpoint");
      assertRefused(await get("/api/v1/webhooks/deliveries?event=evt_%01"), "event");
      const post = (payload: object) => api.request({ method: "POST", url: `${base}/grants`, key: ws.testKey, payload });
      assertRefused(await post({ email: "a\u0000b@example.com" }), "email");
      assertRefused(await post({ email: "a@example.com", note: "x\u0000y" }), "note");
      assertRefused(await post({ email: "a@example.com", note: "bell \u0007" }), "note");
      assertRefused(
        await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: "https://example.com/\u0000" } }),
        "url",
      );
      // A note keeps its line breaks and tabs: they are text, not controls of the protocol.
      const kept = await post({ email: "a@example.com", note: "line one\nline two\ttabbed" });
      assert.equal(kept.statusCode, 201, kept.body);
      assert.equal(kept.json().note, "line one\nline two\ttabbed");
    });

    test("the client API and the processor route refuse them too, without a key", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const signIn = (payload: object) => api.request({ method: "POST", url: "/api/client/v1/sign-in", payload });
      assertRefused(await signIn({ workspace: `${ws.slug}\u0000`, tool: ws.tool, email: "a@example.com", env: "test" }), "workspace");
      assertRefused(await signIn({ workspace: ws.slug, tool: ws.tool, email: "a\u0000@example.com", env: "test" }), "email");
      assertRefused(await api.request({ method: "DELETE", url: "/api/client/v1/purchases/lic_x/seats/se%00at" }), "seat");
      const stripe = await api.request({ method: "POST", url: "/processor/stripe/x%00", payload: {} });
      assert.ok(stripe.statusCode >= 400 && stripe.statusCode < 500, stripe.body);
      assert.equal(stripe.json().error.type, "invalid_request_error");
    });

    test("one tenant's NUL addresses do not fail another tenant's concurrent retrieves", async () => {
      const { services } = await testServices(dialect);
      const victim = await seedWorkspace(services);
      const attacker = await seedWorkspace(services);
      const api = await testApi(services);
      const made = await api.request({
        method: "POST",
        url: `/api/v1/tools/${victim.tool}/grants`,
        key: victim.testKey,
        payload: { email: "known@example.com" },
      });
      assert.equal(made.statusCode, 201);
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          i % 3 === 0
            ? api.request({ url: `/api/v1/tools/${attacker.tool}/customers/a%00b%40example.com`, key: attacker.testKey })
            : api.request({ url: `/api/v1/tools/${victim.tool}/customers/known%40example.com`, key: victim.testKey }),
        ),
      );
      for (const [i, answer] of answers.entries()) {
        if (i % 3 === 0) assert.equal(answer.statusCode, 400, answer.body);
        else {
          assert.equal(answer.statusCode, 200, answer.body);
          assert.equal(answer.json().entitled, true);
        }
      }
    });
  });
}
