// Credits adjusted by hand, on both engines: the vendor API's POST and GET (answers checked
// against the OpenAPI document), the refusals (over-removal writes nothing, note and meter
// required, wrong key, another workspace's tool), the audit of an owner's adjustment, and
// `warden admin credits add|remove|list`.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runWarden, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv, seedCatalogue, testApi, testServices, unique } from "../test-support/harness.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { adjustCredits } from "./credits.service.js";

async function adjustTestbed(dialect: (typeof DIALECTS)[number]) {
  const { services, clock } = await testServices(dialect);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  const url = (email: string, tool = "tabmaster") => `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}/credits`;
  const post = (email: string, body: Record<string, unknown>, key = ws.testKey, tool = "tabmaster") =>
    api.request({ method: "POST", url: url(email, tool), key, payload: body });
  const get = (email: string, key = ws.testKey) => api.request({ url: url(email), key });
  const rows = () => services.db.selectFrom("meter_credits").selectAll().where("workspace_id", "=", ws.workspaceId).execute();
  return { services, clock, ws, api, post, get, rows };
}

for (const dialect of DIALECTS) {
  describe(`credits adjusted by hand (${dialect})`, () => {
    test("adding credits to an unknown address makes the person (account false) and a ledger row; the answer says the balance", async () => {
      const t = await adjustTestbed(dialect);
      const added = await t.post("ada@example.com", { meter: "summaries", amount: 50, note: "Sorry for the outage", expires_in_days: 30 });
      assert.equal(added.statusCode, 201, added.body);
      const body = added.json();
      assert.match(body.id, /^cr_[0-9A-Za-z]{24}$/);
      assert.deepEqual(body, {
        id: body.id,
        meter: "summaries",
        amount: 50,
        note: "Sorry for the outage",
        expires_at: "2026-12-21T12:00:00.000Z",
        created_at: "2026-11-21T12:00:00.000Z",
        balance: 50,
      });
      const person = await t.services.db.selectFrom("people").selectAll().where("workspace_id", "=", t.ws.workspaceId).executeTakeFirstOrThrow();
      assert.equal(person.email, "ada@example.com");
      assert.equal(person.signed_in_at, null);

      const again = await t.post("ada@example.com", { meter: "summaries", amount: 20, note: "Goodwill" });
      assert.equal(again.json().balance, 70);
      assert.equal(again.json().expires_at, null);
    });

    test("removing takes from the soonest-expiring row first, then the oldest; the removal is a ledger row of its own; the ledger lists newest first", async () => {
      const t = await adjustTestbed(dialect);
      const email = "ada@example.com";
      const never = (await t.post(email, { meter: "summaries", amount: 100, note: "never expires" })).json();
      t.clock.advance(1000);
      const soon = (await t.post(email, { meter: "summaries", amount: 30, note: "expires soon", expires_in_days: 10 })).json();
      t.clock.advance(1000);
      const removed = await t.post(email, { meter: "summaries", amount: -50, note: "Charged back by hand" });
      assert.equal(removed.statusCode, 201, removed.body);
      assert.equal(removed.json().balance, 80);
      assert.equal(removed.json().amount, -50);
      assert.equal(removed.json().expires_at, null);

      const ledger = await t.get(email);
      assert.equal(ledger.statusCode, 200, ledger.body);
      const data = (ledger.json() as { data: Record<string, unknown>[] }).data;
      assert.deepEqual(
        data.map((e) => [e.id, e.amount, e.remaining, e.source, e.licence, e.note]),
        [
          [removed.json().id, -50, 0, "adjustment", null, "Charged back by hand"],
          [soon.id, 30, 0, "adjustment", null, "expires soon"],
          [never.id, 100, 80, "adjustment", null, "never expires"],
        ],
      );
      assert.equal(data[1]?.expires_at, soon.expires_at);
    });

    test("removing more than is available is refused (400 amount) and writes nothing, not even the person", async () => {
      const t = await adjustTestbed(dialect);
      await t.post("ada@example.com", { meter: "summaries", amount: 10, note: "ten" });
      const refused = await t.post("ada@example.com", { meter: "summaries", amount: -11, note: "too many" });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().error.param, "amount");
      assert.deepEqual(
        (await t.rows()).map((r) => [Number(r.amount), Number(r.remaining)]),
        [[10, 10]],
      );
      const stranger = await t.post("grace@example.com", { meter: "summaries", amount: -1, note: "none there" });
      assert.equal(stranger.statusCode, 400);
      assert.equal(stranger.json().error.param, "amount");
      assert.equal(
        (await t.services.db.selectFrom("people").select("id").where("workspace_id", "=", t.ws.workspaceId).where("email", "=", "grace@example.com").execute())
          .length,
        0,
      );
    });

    test("refusals: a note is required, amount is not 0, an unknown meter, an expiry on a removal; 401 for a wrong key; 404 for another workspace's tool", async () => {
      const t = await adjustTestbed(dialect);
      const param = async (body: Record<string, unknown>) => {
        const response = await t.post("ada@example.com", body);
        assert.equal(response.statusCode, 400, response.body);
        return response.json().error.param;
      };
      assert.equal(await param({ meter: "summaries", amount: 5 }), "note");
      assert.equal(await param({ meter: "summaries", amount: 5, note: "" }), "note");
      assert.equal(await param({ meter: "summaries", amount: 5, note: "   " }), "note");
      assert.equal(await param({ meter: "summaries", amount: 5, note: "x".repeat(201) }), "note");
      assert.equal(await param({ meter: "summaries", amount: 0, note: "zero" }), "amount");
      assert.equal(await param({ meter: "summaries", amount: 1_000_000_001, note: "too many" }), "amount");
      assert.equal(await param({ meter: "summaries", amount: 1.5, note: "half" }), "amount");
      assert.equal(await param({ meter: "pages", amount: 5, note: "no such meter" }), "meter");
      assert.equal(await param({ meter: "summaries", amount: -5, note: "expiring removal", expires_in_days: 3 }), "expires_in_days");
      assert.deepEqual(await t.rows(), []);

      assert.equal((await t.post("ada@example.com", { meter: "summaries", amount: 5, note: "x" }, "wk_test_wrong")).statusCode, 401);
      assert.equal((await t.get("ada@example.com", "wk_test_wrong")).statusCode, 401);
      const other = await seedCatalogue(t.services);
      const elsewhere = await t.post("ada@example.com", { meter: "summaries", amount: 5, note: "x" }, other.testKey, "nosuchtool");
      assert.equal(elsewhere.statusCode, 404);
      // The other workspace's key sees none of this workspace's ledger.
      await t.post("ada@example.com", { meter: "summaries", amount: 5, note: "ours" });
      const theirs = await t.api.request({ url: `/api/v1/tools/tabmaster/customers/ada%40example.com/credits`, key: other.testKey });
      assert.equal(theirs.statusCode, 200);
      assert.deepEqual(theirs.json(), { data: [] });
      // And the live key sees none of the test environment's.
      const live = await t.api.request({ url: `/api/v1/tools/tabmaster/customers/ada%40example.com/credits`, key: t.ws.liveKey });
      assert.deepEqual(live.json(), { data: [] });
    });

    test("an owner's adjustment from the dashboard is audited as credits.adjusted in the same transaction; a key's is not", async () => {
      const t = await adjustTestbed(dialect);
      const owner = await t.services.db.selectFrom("owners").select(["id", "email"]).where("email", "=", t.ws.ownerEmail).executeTakeFirstOrThrow();
      const principal = {
        keyId: "dashboard",
        workspaceId: t.ws.workspaceId,
        workspaceSlug: t.ws.slug,
        plan: "pro" as const,
        env: "test" as const,
        ownerIds: [owner.id],
        keyRequestCounted: true,
      };
      const adjusted = await adjustCredits(
        { services: t.services, principal, actor: { ownerId: owner.id, email: owner.email } },
        "tabmaster",
        "ada@example.com",
        {
          meter: "summaries",
          amount: 5,
          note: "from the dashboard",
        },
      );
      await t.post("ada@example.com", { meter: "summaries", amount: 5, note: "by key" });
      const audit = await t.services.db
        .selectFrom("audit_log")
        .selectAll()
        .where("workspace_id", "=", t.ws.workspaceId)
        .where("action", "=", "credits.adjusted")
        .execute();
      assert.deepEqual(
        audit.map((a) => [a.owner_id, a.env, a.subject]),
        [[owner.id, "test", adjusted.id]],
      );
    });
  });

  describe(`warden admin credits (${dialect})`, () => {
    test("add, remove and list from the command line; over-removal exits non-zero saying what is available, and writes nothing", async () => {
      const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: "credits-cli-test-key-0123456789abcdef" };
      const owner = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", owner);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", owner, "--plan", "pro");
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      await wardenJson(env, "admin", "meter", "add", "--workspace", slug, "--tool", "tabs", "--id", "summaries", "--name", "Summaries", "--unit", "summaries");
      const who = ["--workspace", slug, "--env", "test", "--tool", "tabs", "--email", "ada@example.com"];
      const added = await wardenJson(
        env,
        "admin",
        "credits",
        "add",
        ...who,
        "--meter",
        "summaries",
        "--amount",
        "40",
        "--note",
        "Welcome",
        "--expires-in-days",
        "7",
      );
      assert.equal(added.amount, 40);
      assert.equal(added.balance, 40);
      assert.equal(typeof added.expires_at, "string");
      const removed = await wardenJson(env, "admin", "credits", "remove", ...who, "--meter", "summaries", "--amount", "15", "--note", "Mistake");
      assert.equal(removed.amount, -15);
      assert.equal(removed.balance, 25);

      const tooMany = await runWarden(env, "admin", "credits", "remove", ...who, "--meter", "summaries", "--amount", "26", "--note", "Too many");
      assert.notEqual(tooMany.code, 0);
      assert.match(tooMany.stderr, /Only 25 summaries credits are available to remove; nothing was removed/);

      const listed = await wardenJson<Record<string, unknown>[]>(env, "admin", "credits", "list", ...who);
      assert.deepEqual(
        listed.map((e) => [e.amount, e.remaining, e.source, e.note]),
        [
          [-15, 0, "adjustment", "Mistake"],
          [40, 25, "adjustment", "Welcome"],
        ],
      );
      const text = await runWarden(env, "admin", "credits", "list", ...who);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /METER\s+AMOUNT\s+REMAINING/);
      assert.match(text.stdout, /summaries\s+40\s+25/);
    });
  });
}
