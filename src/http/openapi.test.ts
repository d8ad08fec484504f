import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { testApi, testServices } from "../test-support/harness.js";
import { openApiDocumentOf } from "../test-support/openapi-check.js";

test("the OpenAPI 3.1 document is valid and describes exactly the six vendor operations, apart from the webhook, client, insights, credits and usage ones and the JWK Set", async () => {
  const { services } = await testServices("sqlite");
  const api = await testApi(services);
  const served = await api.request({ url: "/api/v1/openapi.json" });
  assert.equal(served.statusCode, 200);
  const doc = served.json();
  assert.equal(doc.openapi, "3.1.0");
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  assert.equal(doc.info.version, pkg.version, "the API document's version is the package's (warden --version)");
  assert.deepEqual(doc, JSON.parse(JSON.stringify(await openApiDocumentOf(api.app))));

  const operations = Object.entries(
    doc.paths as Record<string, Record<string, { operationId: string; tags: string[]; responses: Record<string, unknown> }>>,
  ).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const vendor = operations.filter((o) => !["Webhooks", "Client", "Access tokens", "Insights", "Credits", "Usage"].some((tag) => o.op.tags.includes(tag)));
  assert.deepEqual(
    operations
      .filter((o) => o.op.tags.includes("Insights"))
      .map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`)
      .sort(),
    [
      "GET /api/v1/insights/people peopleInsights",
      "GET /api/v1/insights/revenue revenueInsights",
      "GET /api/v1/insights/subscriptions subscriptionInsights",
      "GET /api/v1/insights/use useInsights",
    ],
  );
  assert.deepEqual(
    operations
      .filter((o) => o.op.tags.includes("Credits"))
      .map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`)
      .sort(),
    ["GET /api/v1/tools/{tool}/customers/{email}/credits listCredits", "POST /api/v1/tools/{tool}/customers/{email}/credits adjustCredits"],
  );
  assert.deepEqual(
    operations
      .filter((o) => o.op.tags.includes("Usage"))
      .map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`)
      .sort(),
    ["GET /api/v1/tools/{tool}/customers/{email}/usage listCustomerUsage", "POST /api/v1/tools/{tool}/customers/{email}/usage spendCustomerUsage"],
  );
  assert.deepEqual(
    operations.filter((o) => o.op.tags.includes("Access tokens")).map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`),
    ["GET /.well-known/jwks.json getJwks"],
  );
  assert.ok(operations.filter((o) => o.op.tags.includes("Webhooks")).every((o) => o.path.startsWith("/api/v1/webhooks/")));
  const client = operations.filter((o) => o.op.tags.includes("Client"));
  assert.deepEqual(client.map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`).sort(), [
    "DELETE /api/client/v1/devices/{id} clientSignOutDevice",
    "DELETE /api/client/v1/purchases/{id}/seats/{seat} clientUnassignSeat",
    "GET /api/client/v1/devices clientListDevices",
    "GET /api/client/v1/purchases clientListPurchases",
    "GET /api/client/v1/purchases/{id}/seats clientListSeats",
    "GET /api/client/v1/tools/{tool}/access clientCheckAccess",
    "GET /api/client/v1/tools/{tool}/access/changes clientWaitForAccessChange",
    "GET /api/client/v1/tools/{tool}/usage clientListUsage",
    "POST /api/client/v1/purchases/{id}/seats clientAssignSeat",
    "POST /api/client/v1/sign-in clientSignIn",
    "POST /api/client/v1/sign-in/verify clientVerifySignIn",
    "POST /api/client/v1/subscriptions/{id}/cancel clientCancelSubscription",
    "POST /api/client/v1/subscriptions/{id}/resume clientResumeSubscription",
    "POST /api/client/v1/tools/{tool}/activate clientActivateLicence",
    "POST /api/client/v1/tools/{tool}/checkout clientCreateCheckout",
    "POST /api/client/v1/tools/{tool}/page-tickets clientCreatePageTicket",
    "POST /api/client/v1/tools/{tool}/sign-in/exchange clientExchangeSignIn",
    "POST /api/client/v1/tools/{tool}/trial clientStartTrial",
    "POST /api/client/v1/tools/{tool}/usage clientSpendUsage",
  ]);
  assert.deepEqual(vendor.map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`).sort(), [
    "DELETE /api/v1/tools/{tool}/grants/{id} revokeGrant",
    "GET /api/v1/tools/{tool}/customers listCustomers",
    "GET /api/v1/tools/{tool}/customers/{email} retrieveCustomer",
    "GET /api/v1/tools/{tool}/customers/{email}/features/{feature} checkFeature",
    "GET /api/v1/tools/{tool}/grants listGrants",
    "POST /api/v1/tools/{tool}/grants createGrant",
  ]);
  for (const { op } of operations) {
    for (const status of ["400", "401", "404", "429", "500"]) {
      assert.deepEqual(op.responses[status], {
        description: "Every error answer has this shape",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      });
    }
  }
  assert.deepEqual(doc.security, [{ apiKey: [] }]);
  assert.deepEqual(doc.components.schemas.CustomerPage.properties.next_cursor.anyOf[1], { type: "null" });
});

test("the reference page and its assets are served locally, with nothing fetched from elsewhere", async () => {
  const { services } = await testServices("sqlite");
  const api = await testApi(services);
  const page = await api.app.inject({ url: "/api/v1/docs/" });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers["content-type"]), /text\/html/);
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(assets.length > 0);
  for (const asset of assets) {
    assert.doesNotMatch(asset, /^(https?:)?\/\//, `external asset ${asset}`);
    const url = new URL(asset, "http://localhost/api/v1/docs/").pathname;
    const response = await api.app.inject({ url });
    assert.equal(response.statusCode, 200, url);
  }
  const initializer = await api.app.inject({ url: "/api/v1/docs/static/swagger-initializer.js" });
  assert.equal(initializer.statusCode, 200);
});
