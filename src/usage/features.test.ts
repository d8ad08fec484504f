// Features in every access answer (issue 46, point 1): retrieve, the feature check, the
// client's access check with its signed token, the long poll woken by a plan's features
// changed elsewhere, and grants that name a plan; both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { createLocalJWKSet, jwtVerify } from "jose";
import { clientCalls, testMailbox, untilParked } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { createTool, retirePlan } from "../workspaces/workspace.service.js";
import { addFeature, setPlanTerms } from "./terms.service.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);

const retrieve = (api: TestApi, ws: Workspace, email: string) =>
  api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
const feature = (api: TestApi, ws: Workspace, email: string, name: string, tool = ws.tool) =>
  api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}/features/${name}`, key: ws.testKey });
const grant = (api: TestApi, ws: Workspace, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload, headers });

function ok(response: LightMyRequestResponse, status = 200) {
  assert.equal(response.statusCode, status, response.body);
  return response.json();
}

for (const dialect of DIALECTS) {
  describe(`features in the access answers (${dialect})`, () => {
    test("a grant naming a plan gives exactly that plan's features; without a plan, every feature the tool declares", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const [ada, bea] = [`ada-${ws.slug}@example.com`, `bea-${ws.slug}@example.com`];

      const given = ok(await grant(api, ws, { email: ada, plan: "lifetime" }), 201);
      assert.equal(given.plan, "lifetime");
      assert.equal(ok(await grant(api, ws, { email: bea, days: 30 }), 201).plan, null);
      assert.deepEqual(ok(await retrieve(api, ws, ada)).features, ["export"]);
      assert.deepEqual(ok(await retrieve(api, ws, bea)).features, ["export", "sync"]);
      const listed = ok(await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=${encodeURIComponent(ada)}`, key: ws.testKey }));
      assert.deepEqual(
        listed.data.map((g: { plan: string | null }) => g.plan),
        ["lifetime"],
      );

      assert.deepEqual(ok(await feature(api, ws, ada, "export")), {
        email: ada,
        tool: "tabmaster",
        feature: "export",
        enabled: true,
        entitled: true,
        via: "grant",
      });
      assert.deepEqual(ok(await feature(api, ws, ada, "sync")), {
        email: ada,
        tool: "tabmaster",
        feature: "sync",
        enabled: false,
        entitled: true,
        via: "grant",
      });
      assert.equal(ok(await feature(api, ws, bea, "sync")).enabled, true);

      // A retired plan may still be named; once a pack or a stranger, never.
      await retirePlan(services.db, services.clock, { workspace: ws.slug, tool: "tabmaster", id: "monthly" });
      const retired = ok(await grant(api, ws, { email: `cy-${ws.slug}@example.com`, plan: "monthly" }), 201);
      assert.equal(retired.plan, "monthly");
      assert.deepEqual(ok(await retrieve(api, ws, `cy-${ws.slug}@example.com`)).features, ["export", "sync"]);
      for (const [plan, message] of [
        ["pack-1000", /credit pack: it gives no access/],
        ["nope", /Tool "tabmaster" has no plan "nope"/],
        // The bundle's plan is not the tool's.
        ["suite-lifetime", /Tool "tabmaster" has no plan "suite-lifetime"/],
      ] as const) {
        const refused = await grant(api, ws, { email: `dee-${ws.slug}@example.com`, plan });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(refused.json().error.type, "invalid_request_error");
        assert.equal(refused.json().error.param, "plan");
        assert.match(refused.json().error.message, message);
      }
      // Nothing written for the refused ones.
      assert.equal((await retrieve(api, ws, `dee-${ws.slug}@example.com`)).statusCode, 404);
    });

    test("the plan is part of an idempotent grant's request: the same key with another plan is refused", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = `ida-${ws.slug}@example.com`;
      const key = { "idempotency-key": `k-${ws.slug}` };
      const first = ok(await grant(api, ws, { email, plan: "lifetime" }, key), 201);
      const again = await grant(api, ws, { email, plan: "lifetime" }, key);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.deepEqual(again.json(), first);
      for (const payload of [{ email, plan: "monthly" }, { email }]) {
        const other = await grant(api, ws, payload, key);
        assert.equal(other.statusCode, 400, other.body);
        assert.equal(other.json().error.param, "Idempotency-Key");
      }
    });

    test("the feature check: an unknown feature is 400, an unknown address false, another workspace's tool 404; counted as lookups", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const stranger = `Nobody.${ws.slug}@Example.com`;
      assert.deepEqual(ok(await feature(api, ws, stranger, "export")), {
        email: stranger,
        tool: "tabmaster",
        feature: "export",
        enabled: false,
        entitled: false,
        via: null,
      });

      const unknown = await feature(api, ws, stranger, "print");
      assert.equal(unknown.statusCode, 400, unknown.body);
      assert.deepEqual({ type: unknown.json().error.type, param: unknown.json().error.param }, { type: "invalid_request_error", param: "feature" });
      assert.match(unknown.json().error.message, /Tool "tabmaster" declares no feature "print": it declares export, sync/);
      // A tool that declares none says so.
      const bare = await feature(api, ws, stranger, "export", "notepad");
      assert.equal(bare.statusCode, 400, bare.body);
      assert.match(bare.json().error.message, /declares no feature "export": it declares none/);

      // Another workspace's tool answers as a missing one; without a key, 401.
      const other = await seedWorkspace(services);
      await createTool(services.db, services.clock, { workspace: other.slug, id: `private-${other.slug}`, name: "Private" });
      await addFeature(services.db, services.clock, { workspace: other.slug, tool: `private-${other.slug}`, id: "export", name: "Export" });
      const foreign = await feature(api, ws, "x@example.com", "export", `private-${other.slug}`);
      assert.equal(foreign.statusCode, 404, foreign.body);
      const anonymous = await api.request({ url: "/api/v1/tools/tabmaster/customers/x%40example.com/features/export" });
      assert.equal(anonymous.statusCode, 401);
    });

    test("each feature check is a lookup, counted before the read as retrieve's: unknown addresses and features included", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "3" });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      assert.equal((await retrieve(api, ws, "unknown@example.com")).statusCode, 404);
      assert.equal((await feature(api, ws, "unknown@example.com", "export")).statusCode, 200);
      assert.equal((await feature(api, ws, "unknown@example.com", "print")).statusCode, 400);
      const over = await feature(api, ws, "unknown@example.com", "export");
      assert.equal(over.statusCode, 429, over.body);
      assert.equal((await retrieve(api, ws, "unknown@example.com")).statusCode, 429);
    });

    test("the access check answers features, its state covers them, and the signed token carries them", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const verifying = () => ({ issuer: "warden", audience: `${ws.slug}:test`, currentDate: new Date(clock.now()) });
      const email = `tok-${ws.slug}@example.com`;
      ok(await grant(api, ws, { email, plan: "lifetime" }), 201);
      const token = await signIn(api, ws, email);
      const first = ok(await check(api, ws.tool, token));
      assert.deepEqual(first.features, ["export"]);

      const jwks = createLocalJWKSet(ok(await api.request({ url: "/.well-known/jwks.json" })));
      const { payload } = await jwtVerify(first.token, jwks, verifying());
      assert.deepEqual(payload.features, ["export"]);
      assert.equal(payload.plan, null, "a grant's plan gives features, not the answer's plan");

      // The plan's features change (the operator's command): the state changes with them.
      await setPlanTerms(services.db, services.clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime", features: ["export", "sync"] });
      const second = ok(await check(api, ws.tool, token));
      assert.deepEqual(second.features, ["export", "sync"]);
      assert.notEqual(second.state, first.state);
      assert.deepEqual((await jwtVerify(second.token, jwks, verifying())).payload.features, ["export", "sync"]);

      // A person who holds nothing holds no feature; a tool that declares none answers [].
      const plain = await seedCatalogue(services);
      const other = await signIn(api, plain, `none-${plain.slug}@example.com`);
      assert.deepEqual(ok(await check(api, plain.tool, other)).features, []);
    });

    test("a device's token sent again from memory carries the features of now: the plan's features changed sign a new one at once", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = `again-${ws.slug}@example.com`;
      ok(await grant(api, ws, { email, plan: "lifetime" }), 201);
      const token = await signIn(api, ws, email);
      // The server's loop reads the access-change feed each second; answers are kept once it does.
      await services.accessWatch.poll();
      const jwks = createLocalJWKSet(ok(await api.request({ url: "/.well-known/jwks.json" })));
      const first = ok(await check(api, ws.tool, token));
      clock.advance(5000);
      assert.equal(ok(await check(api, ws.tool, token)).token, first.token, "the same access: the same token");

      await setPlanTerms(services.db, services.clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime", features: ["export", "sync"] });
      const second = ok(await check(api, ws.tool, token));
      assert.notEqual(second.token, first.token);
      const { payload } = await jwtVerify(second.token, jwks, { issuer: "warden", audience: `${ws.slug}:test`, currentDate: new Date(clock.now()) });
      assert.deepEqual([payload.features, payload.iat], [["export", "sync"], Math.floor(clock.now() / 1000)]);
    });

    test("a plan's features changed by another process: the cached answers drop at the feed's next read, and a waiting device is woken", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = `wait-${ws.slug}@example.com`;
      ok(await grant(api, ws, { email, plan: "lifetime" }), 201);
      const token = await signIn(api, ws, email);
      await services.accessWatch.poll();
      const held = ok(await check(api, ws.tool, token));
      assert.deepEqual(ok(await retrieve(api, ws, email)).features, ["export"]);
      const hits = services.answers.stats.hits;
      assert.deepEqual(ok(await retrieve(api, ws, email)).features, ["export"]);
      assert.ok(services.answers.stats.hits > hits, "answered from memory, terms included");

      let answered = false;
      const wait = api
        .request({ url: `/api/client/v1/tools/${ws.tool}/access/changes?state=${held.state}`, headers: { authorization: `Bearer ${token}` } })
        .finally(() => {
          answered = true;
        });
      await untilParked(services);

      // As another process writes it: the plan's terms and the feed's rows for everyone, no word to this process.
      await services.db.transaction().execute(async (trx) => {
        await trx
          .updateTable("plan_terms")
          .set({ features: JSON.stringify(["export", "sync"]) })
          .where("workspace_id", "=", ws.workspaceId)
          .where("plan_id", "=", "lifetime")
          .execute();
        for (const env of ["test", "live"] as const) {
          await trx.insertInto("access_changes").values({ workspace_id: ws.workspaceId, env, person_id: "*", changed_at: clock.now() }).execute();
        }
      });
      assert.deepEqual(ok(await retrieve(api, ws, email)).features, ["export"], "from memory until the feed is read (within a second in a server)");
      assert.equal(answered, false);

      await services.accessWatch.poll();
      const woken = await wait;
      assert.equal(woken.statusCode, 200, woken.body);
      assert.deepEqual(woken.json().features, ["export", "sync"]);
      assert.notEqual(woken.json().state, held.state);
      assert.deepEqual(ok(await retrieve(api, ws, email)).features, ["export", "sync"]);
    });

    test("a change for everyone in another workspace wakes no waiting device here", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const other = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const token = await signIn(api, ws, `calm-${ws.slug}@example.com`);
      const held = ok(await check(api, ws.tool, token));
      const wait = api.request({
        url: `/api/client/v1/tools/${ws.tool}/access/changes?state=${held.state}&wait=1`,
        headers: { authorization: `Bearer ${token}` },
      });
      await untilParked(services);
      await setPlanTerms(services.db, services.clock, { workspace: other.slug, tool: "tabmaster", id: "lifetime", features: ["export", "sync"] });
      await services.accessWatch.poll();
      assert.equal(services.accessWatch.parked, 1, "still waiting: the change was another workspace's");
      clock.advance(1_000);
      await services.accessWatch.poll();
      assert.equal((await wait).statusCode, 204);
    });
  });
}
