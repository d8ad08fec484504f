// Every source of access, created through `warden admin import`'s use case and read back
// through the HTTP API (retrieve and list customers), on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import type { Services } from "../services.js";
import { DIALECTS, seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { toolScope } from "./customer.service.js";
import { findPersonWithSources, loadSources } from "./customer-sources.store.js";
import { findPersonByEmail } from "./person.store.js";

const HOUR_MS = 3_600_000;

const LIFETIME = { id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900, currency: "eur", interval: null };
const MONTHLY = { id: "monthly", name: "Monthly", billing: "subscription", amountCents: 500, currency: "eur", interval: "month" };
const SUITE = { id: "suite-lifetime", name: "Suite for life", billing: "one_time", amountCents: 9900, currency: "eur", interval: null };

async function load(services: Services, ws: Workspace, lines: object[], env: "test" | "live" = "test") {
  return importNdjson(services.db, services.clock, { workspace: ws.slug, env, text: lines.map((l) => JSON.stringify(l)).join("\n") });
}

async function customer(api: TestApi, key: string, tool: string, email: string) {
  const response = await api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}`, key });
  return { status: response.statusCode, body: response.json() };
}

async function list(api: TestApi, key: string, tool: string, query = "") {
  const response = await api.request({ url: `/api/v1/tools/${tool}/customers${query}`, key });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data;
}

for (const dialect of DIALECTS) {
  describe(`customers from every source (${dialect})`, () => {
    test("a bundle licence covers each tool the bundle names, and no other", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const bought = clock.now() - 10 * DAY_MS;
      await load(services, ws, [{ type: "licence", email: "grace@example.com", bundle: "suite", plan: "suite-lifetime", purchased_at: toIso(bought) }]);

      for (const tool of ["tabmaster", "linkkeeper"]) {
        assert.deepEqual(await customer(api, ws.testKey, tool, "grace@example.com"), {
          status: 200,
          body: {
            email: "grace@example.com",
            account: false,
            entitled: true,
            via: "licence",
            paid_at: toIso(bought),
            plan: SUITE,
            subscription: null,
            trial: null,
            features: [],
          },
        });
      }
      const outside = await customer(api, ws.testKey, "notepad", "grace@example.com");
      assert.equal(outside.status, 404);
      assert.equal(outside.body.error.type, "not_found");

      assert.deepEqual(await list(api, ws.testKey, "linkkeeper"), [
        { email: "grace@example.com", account: false, entitled: true, via: "licence", since: toIso(bought), last_active_at: null, devices: 0 },
      ]);
      assert.deepEqual(await list(api, ws.testKey, "notepad"), []);
    });

    test("a licence bought under an address with no account answers with account false, then true once it signs in", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const bought = clock.now() - 3 * DAY_MS;
      await load(services, ws, [{ type: "licence", email: "Ada.Lovelace@gmail.com", tool: "tabmaster", plan: "lifetime", purchased_at: toIso(bought) }]);
      const before = await customer(api, ws.testKey, "tabmaster", "ada.lovelace@gmail.com");
      assert.deepEqual(before.body, {
        email: "Ada.Lovelace@gmail.com",
        account: false,
        entitled: true,
        via: "licence",
        paid_at: toIso(bought),
        plan: LIFETIME,
        subscription: null,
        trial: null,
        features: [],
      });

      await load(services, ws, [{ type: "account", email: "adalovelace@googlemail.com", signed_in_at: toIso(clock.now() - DAY_MS), tools: ["tabmaster"] }]);
      const after = await customer(api, ws.testKey, "tabmaster", "ADALOVELACE@googlemail.com");
      assert.deepEqual(after.body, { ...before.body, account: true });
    });

    test("Gmail spellings with or without dots find one person; a +tag is another address", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      await load(services, ws, [
        { type: "grant", email: "Ada.Lovelace@gmail.com", tool: "tabmaster", starts_at: toIso(clock.now() - DAY_MS) },
        {
          type: "trial",
          email: "a.d.a.lovelace@googlemail.com",
          tool: "tabmaster",
          starts_at: toIso(clock.now() - DAY_MS),
          ends_at: toIso(clock.now() + DAY_MS),
        },
      ]);
      for (const spelling of ["adalovelace@gmail.com", "ada.lovelace@googlemail.com", "A.DA.LOVE.LACE@GMAIL.COM"]) {
        const found = await customer(api, ws.testKey, "tabmaster", spelling);
        assert.equal(found.status, 200, spelling);
        assert.equal(found.body.email, "Ada.Lovelace@gmail.com");
        assert.equal(found.body.via, "trial");
        assert.deepEqual(found.body.trial, { endsAt: toIso(clock.now() + DAY_MS), active: true });
      }
      assert.equal((await customer(api, ws.testKey, "tabmaster", "ada.lovelace+work@gmail.com")).status, 404);
      assert.equal((await list(api, ws.testKey, "tabmaster")).length, 1);
    });

    test("subscriptions follow Stripe's statuses, and one that lapsed is still shown", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const now = clock.now();
      const period = { current_period_start: toIso(now - 40 * DAY_MS), current_period_end: toIso(now - 10 * DAY_MS) };
      const running = { current_period_start: toIso(now - 5 * DAY_MS), current_period_end: toIso(now + 25 * DAY_MS) };
      const base = { type: "subscription", tool: "tabmaster", plan: "monthly", started_at: toIso(now - 100 * DAY_MS) };
      await load(services, ws, [
        { ...base, id: "sub_run", email: "run@example.com", status: "active", ...running },
        { ...base, id: "sub_late", email: "late@example.com", status: "past_due", ...running },
        { ...base, id: "sub_try", email: "try@example.com", status: "trialing", ...running },
        { ...base, id: "sub_unpaid", email: "unpaid@example.com", status: "unpaid", ...running },
        { ...base, id: "sub_paused", email: "paused@example.com", status: "paused", ...running },
        { ...base, id: "sub_new", email: "new@example.com", status: "incomplete", ...running },
        {
          ...base,
          id: "sub_gone",
          email: "gone@example.com",
          status: "canceled",
          ...period,
          cancel_at_period_end: true,
          cancel_at: period.current_period_end,
          ended_at: period.current_period_end,
        },
        { ...base, id: "sub_ended", email: "ended@example.com", status: "active", ...period, ended_at: toIso(now - 12 * DAY_MS) },
      ]);

      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "run@example.com")).body, {
        email: "run@example.com",
        account: false,
        entitled: true,
        via: "subscription",
        paid_at: running.current_period_start,
        plan: MONTHLY,
        subscription: { status: "active", periodEnd: running.current_period_end, cancelAtPeriodEnd: false, cancelAt: null },
        trial: null,
        features: [],
      });
      for (const [email, entitled] of [
        ["late@example.com", true],
        ["try@example.com", true],
        ["unpaid@example.com", false],
        ["paused@example.com", false],
        ["new@example.com", false],
        ["ended@example.com", false],
      ] as const) {
        const { body } = await customer(api, ws.testKey, "tabmaster", email);
        assert.equal(body.entitled, entitled, email);
        assert.equal(body.via, entitled ? "subscription" : null, email);
      }
      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "gone@example.com")).body, {
        email: "gone@example.com",
        account: false,
        entitled: false,
        via: null,
        paid_at: period.current_period_start,
        plan: MONTHLY,
        subscription: { status: "canceled", periodEnd: period.current_period_end, cancelAtPeriodEnd: true, cancelAt: period.current_period_end },
        trial: null,
        features: [],
      });
      const holders = (await list(api, ws.testKey, "tabmaster", "?entitled=true")).map((c: { email: string }) => c.email).sort();
      assert.deepEqual(holders, ["late@example.com", "run@example.com", "try@example.com"]);
    });

    test("a trial is shown with active false once it has ended", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const starts = clock.now() - DAY_MS;
      const ends = clock.now() + 2 * DAY_MS;
      await load(services, ws, [{ type: "trial", email: "margaret@example.com", tool: "tabmaster", starts_at: toIso(starts), ends_at: toIso(ends) }]);
      const running = { email: "margaret@example.com", account: false, paid_at: null, plan: null, subscription: null };
      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "margaret@example.com")).body, {
        ...running,
        entitled: true,
        via: "trial",
        trial: { endsAt: toIso(ends), active: true },
        features: [],
      });
      assert.equal((await list(api, ws.testKey, "tabmaster", "?entitled=true")).length, 1);

      clock.advance(2 * DAY_MS - 1);
      assert.equal((await customer(api, ws.testKey, "tabmaster", "margaret@example.com")).body.via, "trial");
      clock.advance(1);
      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "margaret@example.com")).body, {
        ...running,
        entitled: false,
        via: null,
        trial: { endsAt: toIso(ends), active: false },
        features: [],
      });
      assert.deepEqual(await list(api, ws.testKey, "tabmaster", "?entitled=true"), []);
    });

    test("a timed grant entitles until its end, one until revoked for good; an expired or revoked one does not, and a revoked one is listed as imported", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const now = clock.now();
      const base = { type: "grant", tool: "tabmaster", starts_at: toIso(now - 10 * DAY_MS), note: "imported" };
      await load(services, ws, [
        { ...base, email: "timed@example.com", ends_at: toIso(now + 5 * DAY_MS) },
        { ...base, email: "expired@example.com", ends_at: toIso(now - DAY_MS) },
        { ...base, email: "revoked@example.com", revoked_at: toIso(now - 2 * DAY_MS) },
        { ...base, email: "forever@example.com", ends_at: null },
      ]);
      const via = async (email: string) => (await customer(api, ws.testKey, "tabmaster", email)).body.via;
      assert.equal(await via("timed@example.com"), "grant");
      assert.equal(await via("expired@example.com"), null);
      assert.equal(await via("revoked@example.com"), null);
      assert.equal(await via("forever@example.com"), "grant");

      const grants = await api.request({ url: "/api/v1/tools/tabmaster/grants?email=revoked%40example.com", key: ws.testKey });
      const [revoked] = grants.json().data;
      assert.equal(revoked.revoked_at, toIso(now - 2 * DAY_MS));
      assert.equal(revoked.starts_at, toIso(now - 10 * DAY_MS));
      assert.equal(revoked.created_at, toIso(now - 10 * DAY_MS));
      assert.equal(revoked.note, "imported");
      assert.equal(revoked.live, false);

      clock.advance(5 * DAY_MS);
      assert.equal(await via("timed@example.com"), null);
      assert.equal(await via("forever@example.com"), "grant");
    });

    test("team seats: the buyer holds nothing, each seat follows its team purchase", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const now = clock.now();
      const teamLicence = "lic_TeamTeamTeamTeamTeam0001";
      const suspendedTeam = "lic_TeamTeamTeamTeamTeam0002";
      const bought = toIso(now - 20 * DAY_MS);
      const handedOut = toIso(now - 19 * DAY_MS);
      const running = { current_period_start: toIso(now - 5 * DAY_MS), current_period_end: toIso(now + 25 * DAY_MS) };
      await load(services, ws, [
        { type: "licence", id: teamLicence, email: "it@example.org", tool: "tabmaster", plan: "lifetime", seats: 2, purchased_at: bought },
        { type: "licence", email: "alan@example.org", team_licence: teamLicence, purchased_at: handedOut },
        { type: "licence", email: "it@example.org", team_licence: teamLicence, purchased_at: handedOut },
        { type: "licence", id: suspendedTeam, email: "it2@example.org", tool: "tabmaster", seats: 1, status: "suspended", purchased_at: bought },
        { type: "licence", email: "eve@example.org", team_licence: suspendedTeam, purchased_at: handedOut },
        { type: "subscription", id: "sub_team", email: "boss@example.org", bundle: "suite", status: "active", seats: 5, ...running },
        { type: "licence", email: "carol@example.org", team_subscription: "sub_team", purchased_at: handedOut },
        {
          type: "subscription",
          id: "sub_team_gone",
          email: "boss@example.org",
          tool: "tabmaster",
          plan: "monthly",
          status: "canceled",
          seats: 2,
          current_period_start: toIso(now - 60 * DAY_MS),
          current_period_end: toIso(now - 30 * DAY_MS),
          ended_at: toIso(now - 30 * DAY_MS),
        },
        { type: "licence", email: "dave@example.org", team_subscription: "sub_team_gone", purchased_at: toIso(now - 50 * DAY_MS) },
      ]);

      const buyer = await customer(api, ws.testKey, "tabmaster", "it2@example.org");
      assert.deepEqual(buyer, {
        status: 200,
        body: {
          email: "it2@example.org",
          account: false,
          entitled: false,
          via: null,
          paid_at: bought,
          plan: null,
          subscription: null,
          trial: null,
          features: [],
        },
      });
      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "alan@example.org")).body, {
        email: "alan@example.org",
        account: false,
        entitled: true,
        via: "licence",
        paid_at: handedOut,
        plan: LIFETIME,
        subscription: null,
        trial: null,
        features: [],
      });
      // The buyer who handed a seat to themself holds the tool through that seat.
      assert.equal((await customer(api, ws.testKey, "tabmaster", "it@example.org")).body.via, "licence");
      assert.equal((await customer(api, ws.testKey, "tabmaster", "eve@example.org")).body.entitled, false);
      assert.equal((await customer(api, ws.testKey, "tabmaster", "dave@example.org")).body.entitled, false);
      for (const tool of ["tabmaster", "linkkeeper"]) {
        const carol = await customer(api, ws.testKey, tool, "carol@example.org");
        assert.equal(carol.body.via, "licence", tool);
        const boss = await customer(api, ws.testKey, tool, "boss@example.org");
        assert.equal(boss.body.entitled, false, tool);
        assert.equal(boss.body.subscription.status, "active", tool);
      }
      assert.equal((await customer(api, ws.testKey, "notepad", "carol@example.org")).status, 404);

      const holders = (await list(api, ws.testKey, "tabmaster", "?entitled=true")).map((c: { email: string }) => c.email).sort();
      assert.deepEqual(holders, ["alan@example.org", "carol@example.org", "it@example.org"]);
    });

    test("list customers shows account, devices, last activity and since from imported accounts and devices", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const now = clock.now();
      const ago = (ms: number) => toIso(now - ms);
      await load(services, ws, [
        { type: "account", email: "mia@example.com", signed_in_at: ago(20 * DAY_MS), tools: ["tabmaster", "linkkeeper"] },
        { type: "device", email: "mia@example.com", tool: "tabmaster", name: "Chrome", created_at: ago(20 * DAY_MS), last_active_at: ago(HOUR_MS) },
        {
          type: "device",
          email: "mia@example.com",
          tool: "tabmaster",
          name: "Edge",
          platform: "windows",
          created_at: ago(9 * DAY_MS),
          last_active_at: ago(2 * DAY_MS),
        },
        {
          type: "device",
          email: "mia@example.com",
          tool: "tabmaster",
          name: "Old laptop",
          created_at: ago(19 * DAY_MS),
          last_active_at: ago(10 * DAY_MS),
          signed_out_at: ago(10 * DAY_MS),
        },
        { type: "licence", id: "lic_NoahNoahNoahNoahNoah0001", email: "noah@example.com", tool: "tabmaster", purchased_at: ago(5 * DAY_MS) },
        {
          type: "device",
          email: "noah@example.com",
          tool: "tabmaster",
          name: "Firefox",
          created_at: ago(5 * DAY_MS),
          last_active_at: ago(3 * HOUR_MS),
          licence: "lic_NoahNoahNoahNoahNoah0001",
        },
        { type: "licence", email: "paul@example.com", tool: "tabmaster", purchased_at: ago(30 * DAY_MS) },
        { type: "account", email: "paul@example.com", signed_in_at: ago(10 * DAY_MS), tools: ["tabmaster"] },
        { type: "account", email: "olga@example.com", signed_in_at: ago(3 * DAY_MS) },
        { type: "device", email: "ivan@example.com", tool: "tabmaster", name: "Chrome", created_at: ago(DAY_MS) },
      ]);

      const noah = {
        email: "noah@example.com",
        account: false,
        entitled: true,
        via: "licence",
        since: ago(5 * DAY_MS),
        last_active_at: ago(3 * HOUR_MS),
        devices: 1,
      };
      const mia = { email: "mia@example.com", account: true, entitled: false, via: null, since: ago(20 * DAY_MS), last_active_at: ago(HOUR_MS), devices: 2 };
      const paul = { email: "paul@example.com", account: true, entitled: true, via: "licence", since: ago(30 * DAY_MS), last_active_at: null, devices: 0 };
      assert.deepEqual(await list(api, ws.testKey, "tabmaster"), [noah, mia, paul]);
      assert.deepEqual(await list(api, ws.testKey, "tabmaster", "?entitled=true"), [noah, paul]);
      assert.deepEqual(await list(api, ws.testKey, "tabmaster", "?entitled=false"), [mia]);
      assert.deepEqual(await list(api, ws.testKey, "linkkeeper"), [{ ...mia, last_active_at: null, devices: 0 }]);

      // Signed in to the workspace but to no tool: known (an account), yet listed for none.
      assert.deepEqual((await customer(api, ws.testKey, "tabmaster", "olga@example.com")).body, {
        email: "olga@example.com",
        account: true,
        entitled: false,
        via: null,
        paid_at: null,
        plan: null,
        subscription: null,
        trial: null,
        features: [],
      });
      // A device alone makes no customer: no account and no source.
      assert.equal((await customer(api, ws.testKey, "tabmaster", "ivan@example.com")).status, 404);
    });

    test("an address known to nothing answers 404", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      await load(services, ws, [{ type: "grant", email: "known@example.com", tool: "tabmaster", starts_at: toIso(clock.now()) }]);
      const unknown = await customer(api, ws.testKey, "tabmaster", "stranger@example.com");
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.type, "not_found");
      // Known for one tool is not known for another.
      assert.equal((await customer(api, ws.testKey, "linkkeeper", "known@example.com")).status, 404);
    });

    test("test and live data are kept apart", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const now = clock.now();
      await load(services, ws, [
        { type: "licence", email: "both@example.com", tool: "tabmaster", purchased_at: toIso(now - DAY_MS) },
        { type: "account", email: "testonly@example.com", signed_in_at: toIso(now - 2 * HOUR_MS), tools: ["tabmaster"] },
      ]);
      assert.equal((await customer(api, ws.liveKey, "tabmaster", "both@example.com")).status, 404);
      assert.equal((await customer(api, ws.liveKey, "tabmaster", "testonly@example.com")).status, 404);
      assert.deepEqual(await list(api, ws.liveKey, "tabmaster"), []);

      await load(services, ws, [{ type: "grant", email: "both@example.com", tool: "tabmaster", starts_at: toIso(now - HOUR_MS) }], "live");
      assert.equal((await customer(api, ws.testKey, "tabmaster", "both@example.com")).body.via, "licence");
      assert.equal((await customer(api, ws.liveKey, "tabmaster", "both@example.com")).body.via, "grant");
      assert.deepEqual(
        (await list(api, ws.liveKey, "tabmaster")).map((c: { email: string; since: string }) => [c.email, c.since]),
        [["both@example.com", toIso(now - HOUR_MS)]],
      );
      assert.deepEqual(
        (await list(api, ws.testKey, "tabmaster")).map((c: { email: string }) => c.email),
        ["testonly@example.com", "both@example.com"],
      );
    });

    test("retrieve's one-statement read answers the same person and sources as the list's queries", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const now = clock.now();
      const running = { current_period_start: toIso(now - 5 * DAY_MS), current_period_end: toIso(now + 25 * DAY_MS) };
      const team = "lic_TeamTeamTeamTeamTeam0009";
      await load(services, ws, [
        { type: "licence", email: "Mixed.Person@gmail.com", tool: "tabmaster", plan: "lifetime", purchased_at: toIso(now - 30 * DAY_MS) },
        {
          type: "licence",
          email: "mixed.person@gmail.com",
          bundle: "suite",
          plan: "suite-lifetime",
          status: "revoked",
          purchased_at: toIso(now - 20 * DAY_MS),
        },
        {
          type: "licence",
          id: team,
          email: "buyer@example.org",
          tool: "tabmaster",
          plan: "lifetime",
          seats: 3,
          status: "suspended",
          purchased_at: toIso(now - 9 * DAY_MS),
        },
        { type: "licence", email: "mixedperson@gmail.com", team_licence: team, purchased_at: toIso(now - 8 * DAY_MS) },
        {
          type: "subscription",
          id: "sub_mixed",
          email: "mixedperson@gmail.com",
          tool: "tabmaster",
          plan: "monthly",
          status: "past_due",
          cancel_at_period_end: true,
          cancel_at: running.current_period_end,
          ...running,
        },
        { type: "grant", email: "mixedperson@gmail.com", tool: "tabmaster", starts_at: toIso(now - DAY_MS), ends_at: toIso(now + DAY_MS), note: "n" },
        { type: "trial", email: "mixedperson@gmail.com", tool: "tabmaster", starts_at: toIso(now - 3 * DAY_MS), ends_at: toIso(now - DAY_MS) },
        { type: "grant", email: "mixedperson@gmail.com", tool: "linkkeeper", starts_at: toIso(now - DAY_MS) },
      ]);
      const scope = toolScope(ws.workspaceId, "test", "tabmaster");
      const found = await findPersonWithSources(services.db, { scope, email: "mixed.person@googlemail.com" });
      assert.ok(found);
      const person = await findPersonByEmail(services.db, ws.workspaceId, "test", "mixedperson@gmail.com");
      assert.deepEqual(found.person, person);
      const byId = <T extends { id: string }>(a: T, b: T) => a.id.localeCompare(b.id);
      const sources = (await loadSources(services.db, scope, [found.person.id])).get(found.person.id);
      assert.ok(sources);
      assert.deepEqual(
        { licences: [...found.sources.licences].sort(byId), subscriptions: found.sources.subscriptions, grants: [...found.sources.grants].sort(byId) },
        { licences: [...sources.licences].sort(byId), subscriptions: sources.subscriptions, grants: [...sources.grants].sort(byId) },
      );
      assert.deepEqual(
        found.sources.licences.map((l) => [l.status, l.teamLicenceStatus, l.plan?.id ?? null]).sort(),
        [
          ["active", "suspended", "lifetime"],
          ["active", null, "lifetime"],
          ["revoked", null, "suite-lifetime"],
        ].sort(),
      );
      assert.equal(found.sources.subscriptions[0]?.cancelAtPeriodEnd, true);
      assert.equal(found.sources.grants.length, 2);
      assert.equal(await findPersonWithSources(services.db, { scope, email: "nobody@example.com" }), null);
    });
  });
}
