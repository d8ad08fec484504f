import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { findLicenceById } from "../billing/licence.store.js";
import { findSubscription } from "../billing/subscription.store.js";
import { main } from "../cli.js";
import { DAY_MS, toIso } from "../clock.js";
import { ApiError } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { DIALECTS, seedCatalogue, testApi, testServices, unique } from "../test-support/harness.js";
import { type ImportProgress, ImportRejected, importNdjson, type LineProblem } from "./import.service.js";

const NOW = "2026-11-21T12:00:00.000Z";
const PAST = "2026-11-01T00:00:00.000Z";

const ndjson = (lines: (object | string)[]) => lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");

async function rejected(run: Promise<unknown>): Promise<ImportRejected> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ImportRejected) return error;
    throw error;
  }
  assert.fail("the import was accepted");
}

async function rowsOf(services: Services, workspaceId: string) {
  const count = async (table: "people" | "licences" | "subscriptions" | "grants" | "devices" | "customers") =>
    Number(
      (
        await services.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("workspace_id", "=", workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    people: await count("people"),
    licences: await count("licences"),
    subscriptions: await count("subscriptions"),
    grants: await count("grants"),
    devices: await count("devices"),
    customers: await count("customers"),
  };
}

const NOTHING = { people: 0, licences: 0, subscriptions: 0, grants: 0, devices: 0, customers: 0 };

// Licence ids are unique across the service, and every test of a file shares its database.
const licenceId = () => `lic_${randomBase62(24)}`;
const grantLine = { type: "grant", email: "g@example.com", tool: "tabmaster", starts_at: PAST };

for (const dialect of DIALECTS) {
  describe(`warden admin import (${dialect})`, () => {
    test("the README's example lines import as documented", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const readme = await readFile(new URL("./README.md", import.meta.url), "utf8");
      const block = /```ndjson\n([\s\S]*?)```/.exec(readme)?.[1];
      assert.ok(block, "README has an ndjson example block");
      const types = block
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type);
      assert.deepEqual([...new Set(types)].sort(), ["account", "device", "grant", "licence", "subscription", "trial"]);

      const counts = await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: block });
      assert.deepEqual(counts, { accounts: 1, devices: 1, licences: 3, subscriptions: 1, trials: 1, grants: 1, credits: 0, used: 0, unchanged: 0 });

      const via = async (tool: string, email: string) => {
        const r = await api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
        assert.equal(r.statusCode, 200, r.body);
        return r.json().via;
      };
      assert.equal(await via("linkkeeper", "grace@example.com"), "licence");
      assert.equal(await via("tabmaster", "alan@example.org"), "licence");
      assert.equal(await via("tabmaster", "it@example.org"), null);
      assert.equal(await via("tabmaster", "linus@example.com"), "subscription");
      assert.equal(await via("tabmaster", "margaret@example.com"), "trial");
      assert.equal(await via("tabmaster", "barbara@example.com"), "grant");
      assert.equal(await via("tabmaster", "adalovelace@gmail.com"), null);
    });

    test("writes each kind and returns counts; ids given are kept, others made", async () => {
      const { services } = await testServices(dialect);
      const team = licenceId();
      const ws = await seedCatalogue(services);
      const scope = { workspaceId: ws.workspaceId, env: "test" as const };
      const counts = await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: `\uFEFF${ndjson([
          {
            type: "licence",
            id: team,
            email: "it@example.org",
            tool: "tabmaster",
            plan: "lifetime",
            seats: 3,
            purchased_at: PAST,
            currency: "EUR",
            amount_cents: 0,
          },
          "",
          { type: "licence", email: "seat@example.org", team_licence: team, purchased_at: PAST },
          "   ",
          {
            type: "subscription",
            id: "sub_1PqRsTuVwXyZ",
            email: "sub@example.com",
            tool: "tabmaster",
            plan: "monthly",
            status: "past_due",
            current_period_start: PAST,
            current_period_end: "2026-12-01T00:00:00.000Z",
            cancel_at_period_end: true,
            cancel_at: "2026-12-01T00:00:00+00:00",
          },
          { ...grantLine, type: "trial", ends_at: "2026-11-15T00:00:00Z" },
          grantLine,
          { type: "device", email: "g@example.com", tool: "tabmaster", name: "Chrome", created_at: PAST, licence: team },
          { type: "account", email: "g@example.com", signed_in_at: PAST },
        ])}\r\n`,
      });
      assert.deepEqual(counts, { accounts: 1, devices: 1, licences: 2, subscriptions: 1, trials: 1, grants: 1, credits: 0, used: 0, unchanged: 0 });

      const stored = await findLicenceById(services.db, team);
      assert.deepEqual(stored, {
        id: team,
        workspaceId: ws.workspaceId,
        env: "test",
        personId: stored?.personId,
        productKind: "tool",
        productId: "tabmaster",
        planId: "lifetime",
        status: "active",
        purchasedAt: Date.parse(PAST),
        amountCents: 0,
        currency: "eur",
        paymentIntent: null,
        checkoutSession: null,
        earnings: null,
        seats: 3,
        teamLicenceId: null,
        teamSubscriptionId: null,
        createdAt: Date.parse(PAST),
        refundedAt: null,
      });
      const seat = await services.db.selectFrom("licences").select(["id", "plan_id", "product_id"]).where("team_licence_id", "=", team).execute();
      assert.equal(seat.length, 1);
      assert.match(seat[0]?.id ?? "", /^lic_[0-9A-Za-z]{24}$/);
      assert.equal(seat[0]?.plan_id, "lifetime");
      assert.equal(seat[0]?.product_id, "tabmaster");

      const subscription = await findSubscription(services.db, scope, "sub_1PqRsTuVwXyZ");
      assert.equal(subscription?.status, "past_due");
      assert.equal(subscription?.createdAt, Date.parse(PAST));
      assert.equal(subscription?.currentPeriodEnd, Date.parse("2026-12-01T00:00:00.000Z"));
      assert.equal(subscription?.cancelAtPeriodEnd, true);
      assert.equal(subscription?.cancelAt, Date.parse("2026-12-01T00:00:00.000Z"));
      assert.equal(subscription?.endedAt, null);

      const person = await services.db
        .selectFrom("people")
        .select(["signed_in_at"])
        .where("workspace_id", "=", ws.workspaceId)
        .where("email", "=", "g@example.com")
        .executeTakeFirstOrThrow();
      assert.equal(Number(person.signed_in_at), Date.parse(PAST));
      // The team licence's buyer holds nothing by it and never signed in: known, but not a customer row.
      assert.deepEqual(await rowsOf(services, ws.workspaceId), { people: 4, licences: 2, subscriptions: 1, grants: 2, devices: 1, customers: 3 });
    });

    test("every bad line is reported with its number and reason, and nothing is written", async () => {
      const { services } = await testServices(dialect);
      const team = licenceId();
      const ws = await seedCatalogue(services);
      const seat = (extra: object) => ({ type: "licence", email: "seat@example.org", purchased_at: PAST, ...extra });
      const period = { current_period_start: PAST, current_period_end: "2026-12-01T00:00:00Z" };
      const lines: (object | string)[] = [
        /* 1 */ { type: "account", email: "Ada.Lovelace@gmail.com", signed_in_at: PAST, tools: ["tabmaster"] },
        /* 2 */ { type: "account", email: "not-an-email", signed_in_at: PAST },
        /* 3 */ "{not json",
        /* 4 */ "[1, 2]",
        /* 5 */ { email: "a@example.com" },
        /* 6 */ { type: "refund", email: "a@example.com" },
        /* 7 */ { ...grantLine, colour: "red" },
        /* 8 */ { type: "trial", email: "t@example.com", tool: "tabmaster", starts_at: PAST },
        /* 9 */ { ...grantLine, starts_at: "2026-11-01" },
        /* 10 */ { ...grantLine, starts_at: "2026-11-22T00:00:00Z" },
        /* 11 */ { ...grantLine, type: "trial", starts_at: "2026-11-21T12:00:00.001Z", ends_at: "2026-12-01T00:00:00Z" },
        /* 12 */ { type: "licence", email: "l@example.com", tool: "nope", purchased_at: PAST },
        /* 13 */ { type: "licence", email: "l@example.com", tool: "tabmaster", bundle: "suite", purchased_at: PAST },
        /* 14 */ { type: "licence", email: "l@example.com", tool: "tabmaster", plan: "monthly", purchased_at: PAST },
        /* 15 */ { type: "subscription", id: "sub_a", email: "s@example.com", tool: "tabmaster", plan: "ghost", status: "active", ...period },
        /* 16 */ { type: "subscription", id: "sub_b", email: "s@example.com", tool: "tabmaster", status: "cancelled", ...period },
        /* 17 */ seat({ team_licence: team }),
        /* 18 */ { type: "licence", id: team, email: "it@example.org", tool: "tabmaster", seats: 1, purchased_at: PAST },
        /* 19 */ seat({ team_licence: team, plan: "lifetime" }),
        /* 20 */ seat({ team_licence: team }),
        /* 21 */ seat({ team_licence: team }),
        /* 22 */ seat({ team_licence: team, status: "revoked" }),
        /* 23 */ { type: "licence", id: team, email: "l@example.com", tool: "tabmaster", purchased_at: PAST },
        /* 24 */ { ...grantLine, ends_at: "2026-10-01T00:00:00Z" },
        /* 25 */ { type: "device", email: "d@example.com", tool: "tabmaster", name: "Chrome", created_at: PAST, licence: "lic_000000000000000000000000" },
        /* 26 */ {
          type: "subscription",
          id: "sub_c",
          email: "s@example.com",
          bundle: "suite",
          status: "active",
          current_period_start: PAST,
          current_period_end: PAST,
        },
        /* 27 */ { type: "subscription", id: "sub_c", email: "s@example.com", tool: "tabmaster", status: "active", ...period },
        /* 28 */ seat({ team_subscription: "sub_c" }),
        /* 29 */ { type: "account", email: "adalovelace@googlemail.com", signed_in_at: PAST },
        /* 30 */ { ...grantLine, note: "nul\u0000here" },
        /* 31 */ { ...grantLine, tool: "tab master" },
        /* 32 */ { type: "licence", id: "lic_short", email: "l@example.com", tool: "tabmaster", purchased_at: PAST },
        /* 33 */ { type: "device", email: "d@example.com", tool: "tabmaster", name: "Chrome", created_at: PAST, last_active_at: "2026-10-01T00:00:00Z" },
        /* 34 */ { type: "grant", email: "g@example.com", tool: "tabmaster", starts_at: PAST, revoked_at: "2026-10-01T00:00:00Z" },
        /* 35 */ { type: "account", email: "x@example.com", signed_in_at: PAST, tools: ["tabmaster", "ghost"] },
        /* 36 */ { type: "licence", email: "l@example.com", tool: "tabmaster", purchased_at: "2026-02-30T00:00:00Z" },
        /* 37 */ { type: "licence", email: "l@example.com", tool: "tabmaster", purchased_at: PAST, seats: 0 },
        /* 38 */ "",
        /* 39 */ { ...grantLine, email: "two@@example.com", tool: "ghost" },
        /* 40 */ { type: "grant", email: "g@example.com", tool: "tabmaster", starts_at: "2016-12-31T23:59:60Z" },
        /* 41 */ { type: "trial", email: "Trial.Person@gmail.com", tool: "tabmaster", starts_at: PAST, ends_at: "2026-12-01T00:00:00Z" },
        /* 42 */ { type: "trial", email: "trialperson@googlemail.com", tool: "tabmaster", starts_at: PAST, ends_at: "2026-12-01T00:00:00Z" },
      ];
      const error = await rejected(importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson(lines) }));

      const seatRule =
        "A seat takes its tool or bundle, plan and price from its team purchase: it has no plan, seats, amount_cents, currency, payment_intent or checkout_session.";
      const expected: LineProblem[] = [
        { line: 2, message: 'email "not-an-email" is not an email address such as person@example.com' },
        { line: 3, message: error.problems.find((p) => p.line === 3)?.message ?? "" },
        { line: 4, message: "a line must be a JSON object" },
        { line: 5, message: 'missing field "type"' },
        { line: 6, message: "type must be one of account, device, licence, subscription, trial, grant" },
        { line: 7, message: 'unknown field "colour" for a grant line' },
        { line: 8, message: 'missing field "ends_at"' },
        { line: 9, message: "starts_at must be an ISO 8601 date-time with a time zone, such as 2026-11-21T12:00:00.000Z" },
        { line: 10, message: `starts_at 2026-11-22T00:00:00.000Z is in the future (now is ${NOW})` },
        { line: 11, message: `starts_at 2026-11-21T12:00:00.001Z is in the future (now is ${NOW})` },
        { line: 12, message: 'no tool "nope" in this workspace' },
        {
          line: 13,
          message: "A licence names exactly one of tool, bundle, team_licence (a seat of a team licence) or team_subscription (a seat of a team subscription).",
        },
        { line: 14, message: 'plan "monthly" is billed subscription; a licence needs a one_time plan' },
        { line: 15, message: 'no plan "ghost" for tool "tabmaster"' },
        { line: 16, message: "status must be one of incomplete, incomplete_expired, trialing, active, past_due, canceled, unpaid, paused" },
        { line: 17, message: `team_licence ${team} is not a team licence (a licence with seats) on an earlier line or stored in this environment` },
        { line: 19, message: seatRule },
        { line: 21, message: `team_licence ${team} has 1 seat, all in use` },
        { line: 23, message: `licence id ${team} is already on line 18` },
        { line: 24, message: "ends_at 2026-10-01T00:00:00.000Z is not after starts_at 2026-11-01T00:00:00.000Z" },
        { line: 25, message: "licence lic_000000000000000000000000 is neither on an earlier line nor stored in this environment" },
        { line: 26, message: "current_period_end 2026-11-01T00:00:00.000Z is not after current_period_start 2026-11-01T00:00:00.000Z" },
        { line: 27, message: "subscription sub_c is already on line 26" },
        {
          line: 28,
          message: "team_subscription sub_c is not a team subscription (a subscription with seats) on an earlier line or stored in this environment",
        },
        { line: 29, message: "the account of adalovelace@googlemail.com is already on line 1; list all its tools on one line" },
        { line: 30, message: "note is not valid: at most 200 characters, no NUL; shown in the dashboard." },
        {
          line: 31,
          message:
            "tool is not valid: 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit: the id of a tool, bundle or plan of the workspace.",
        },
        { line: 32, message: "id is not valid: lic_ followed by 24 base62 characters." },
        { line: 33, message: "last_active_at 2026-10-01T00:00:00.000Z is before created_at 2026-11-01T00:00:00.000Z" },
        { line: 34, message: "revoked_at 2026-10-01T00:00:00.000Z is before starts_at 2026-11-01T00:00:00.000Z" },
        { line: 35, message: 'no tool "ghost" in this workspace' },
        { line: 36, message: "purchased_at must be an ISO 8601 date-time with a time zone, such as 2026-11-21T12:00:00.000Z" },
        { line: 37, message: "seats must be >= 1" },
        { line: 39, message: 'email "two@@example.com" is not an email address such as person@example.com' },
        { line: 39, message: 'no tool "ghost" in this workspace' },
        {
          line: 40,
          message: 'starts_at "2016-12-31T23:59:60Z" is not a time this service can read; write it like 2026-11-21T12:00:00.000Z',
        },
        { line: 42, message: "a second trial of tabmaster for trialperson@googlemail.com (line 41 has one); a person has one trial per tool" },
      ];
      assert.deepEqual(error.problems, expected);
      assert.match(error.problems.find((p) => p.line === 3)?.message ?? "", /^not valid JSON: /);

      assert.ok(error instanceof ApiError);
      assert.equal(error.code, "invalid_parameter");
      assert.equal(error.param, "FILE");
      const [first, ...listed] = error.message.split("\n");
      assert.equal(first, "The input has 36 bad lines; nothing was imported.");
      assert.deepEqual(
        listed,
        expected.map((p) => `line ${p.line}: ${p.message}`),
      );

      // Lines 1, 18, 20 and 22 are good, but nothing of the file is written.
      assert.deepEqual(await rowsOf(services, ws.workspaceId), NOTHING);
    });

    test("seats may refer to a team purchase already stored; its seats in use count", async () => {
      const { services } = await testServices(dialect);
      const team = licenceId();
      const plain = licenceId();
      const ws = await seedCatalogue(services);
      const run = (lines: object[], env = "test") => importNdjson(services.db, services.clock, { workspace: ws.slug, env, text: ndjson(lines) });
      const seat = (email: string, team: object, extra: object = {}) => ({ type: "licence", email, purchased_at: PAST, ...team, ...extra });
      const period = { current_period_start: PAST, current_period_end: "2026-12-01T00:00:00Z" };

      await run([
        { type: "licence", id: team, email: "it@example.org", tool: "tabmaster", seats: 2, purchased_at: PAST },
        seat("a@example.org", { team_licence: team }),
        { type: "subscription", id: "sub_team", email: "boss@example.org", bundle: "suite", status: "active", seats: 1, ...period },
        { type: "licence", id: plain, email: "p@example.org", tool: "tabmaster", purchased_at: PAST },
      ]);
      assert.deepEqual(await run([seat("b@example.org", { team_licence: team }), seat("c@example.org", { team_subscription: "sub_team" })]), {
        accounts: 0,
        devices: 0,
        licences: 2,
        subscriptions: 0,
        trials: 0,
        grants: 0,
        credits: 0,
        used: 0,
        unchanged: 0,
      });
      const before = await rowsOf(services, ws.workspaceId);

      const full = await rejected(
        run([
          seat("d@example.org", { team_licence: team }),
          seat("e@example.org", { team_subscription: "sub_team" }),
          { type: "licence", id: team, email: "x@example.org", tool: "tabmaster", purchased_at: PAST },
          { type: "subscription", id: "sub_team", email: "x@example.org", tool: "tabmaster", status: "active", ...period },
          seat("f@example.org", { team_licence: plain }),
        ]),
      );
      assert.deepEqual(full.problems, [
        { line: 1, message: `team_licence ${team} has 2 seats, all in use` },
        { line: 2, message: "team_subscription sub_team has 1 seat, all in use" },
        { line: 3, message: `licence id ${team} exists already for another person` },
        { line: 4, message: "subscription sub_team exists already for another person" },
        {
          line: 5,
          message: `team_licence ${plain} is not a team licence (a licence with seats) on an earlier line or stored in this environment`,
        },
      ]);
      assert.deepEqual(await rowsOf(services, ws.workspaceId), before);

      // A revoked seat frees its place; the team is not found from the live environment.
      assert.equal((await run([seat("g@example.org", { team_licence: team }, { status: "revoked" })])).licences, 1);
      const live = await rejected(run([seat("h@example.org", { team_licence: team })], "live"));
      assert.deepEqual(
        live.problems.map((p) => p.message),
        [`team_licence ${team} is not a team licence (a licence with seats) on an earlier line or stored in this environment`],
      );

      // Licence ids are unique across workspaces; subscription ids only within one environment.
      const other = await seedCatalogue(services);
      const elsewhere = await rejected(
        importNdjson(services.db, services.clock, {
          workspace: other.slug,
          env: "test",
          text: ndjson([{ type: "licence", id: team, email: "x@example.org", tool: "tabmaster", purchased_at: PAST }]),
        }),
      );
      assert.deepEqual(elsewhere.problems, [{ line: 1, message: `licence id ${team} exists already` }]);
      const sameSubscriptionId = await importNdjson(services.db, services.clock, {
        workspace: other.slug,
        env: "test",
        text: ndjson([{ type: "subscription", id: "sub_team", email: "x@example.org", tool: "tabmaster", status: "active", ...period }]),
      });
      assert.equal(sameSubscriptionId.subscriptions, 1);
      assert.equal(
        (await run([{ type: "subscription", id: "sub_team", email: "x@example.org", tool: "tabmaster", status: "active", ...period }], "live")).subscriptions,
        1,
      );
    });

    test("a person has one trial per tool: a trial already stored refuses another", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const trial = { type: "trial", email: "once@example.com", tool: "tabmaster", starts_at: PAST, ends_at: "2026-12-01T00:00:00Z" };
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson([trial]) });
      // The same trial again is the same line imported twice: unchanged.
      const again = await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: ndjson([{ ...trial, email: "ONCE@example.com" }]),
      });
      assert.deepEqual([again.trials, again.unchanged], [0, 1]);
      const error = await rejected(
        importNdjson(services.db, services.clock, {
          workspace: ws.slug,
          env: "test",
          text: ndjson([{ ...trial, email: "ONCE@example.com", ends_at: "2026-12-02T00:00:00Z" }]),
        }),
      );
      assert.deepEqual(error.problems, [{ line: 1, message: "ONCE@example.com has a trial of tabmaster already; a person has one trial per tool" }]);
      // Another tool, or the live environment, is another trial.
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "live", text: ndjson([trial]) });
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson([{ ...trial, tool: "linkkeeper" }]) });
    });

    test("the workspace, the environment and an empty file are refused before any line", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const text = ndjson([grantLine]);
      await assert.rejects(importNdjson(services.db, services.clock, { workspace: unique("ghost"), env: "test", text }), (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.code, "not_found");
        return true;
      });
      await assert.rejects(importNdjson(services.db, services.clock, { workspace: ws.slug, env: "prod", text }), (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.deepEqual([e.code, e.param], ["invalid_parameter", "env"]);
        return true;
      });
      await assert.rejects(importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: "\n  \n" }), (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assert.deepEqual([e.code, e.param, e.message], ["invalid_parameter", "FILE", "The input holds no lines to import."]);
        return true;
      });
      assert.deepEqual(await rowsOf(services, ws.workspaceId), NOTHING);
    });

    test("importing the same file twice changes nothing the second time", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const team = licenceId();
      const bought = licenceId();
      const period = { current_period_start: PAST, current_period_end: "2026-12-01T00:00:00Z" };
      const lines = [
        { type: "account", email: "Ada.Lovelace@gmail.com", signed_in_at: PAST, tools: ["tabmaster", "linkkeeper"] },
        { type: "licence", id: team, email: "it@example.org", tool: "tabmaster", plan: "lifetime", seats: 2, purchased_at: PAST },
        { type: "licence", email: "seat@example.org", team_licence: team, purchased_at: PAST },
        { type: "licence", id: bought, email: "adalovelace@googlemail.com", bundle: "suite", purchased_at: PAST, amount_cents: 4900, currency: "EUR" },
        { type: "licence", email: "plain@example.org", tool: "tabmaster", purchased_at: PAST },
        { type: "subscription", id: "sub_twice", email: "boss@example.org", tool: "tabmaster", plan: "monthly", status: "active", seats: 1, ...period },
        { type: "licence", email: "member@example.org", team_subscription: "sub_twice", purchased_at: PAST },
        { type: "trial", email: "t@example.com", tool: "tabmaster", starts_at: PAST, ends_at: "2026-11-15T00:00:00Z" },
        grantLine,
        { ...grantLine, starts_at: "2026-10-01T00:00:00Z", ends_at: "2026-10-15T00:00:00Z", note: "old" },
        { type: "device", email: "Ada.Lovelace@gmail.com", tool: "tabmaster", name: "Chrome", created_at: PAST, licence: bought },
      ];
      const snapshot = async () => {
        const all = async (table: "people" | "licences" | "subscriptions" | "grants" | "devices" | "customers") =>
          (await services.db.selectFrom(table).selectAll().where("workspace_id", "=", ws.workspaceId).execute()).map((row) => JSON.stringify(row)).sort();
        return {
          people: await all("people"),
          licences: await all("licences"),
          subscriptions: await all("subscriptions"),
          grants: await all("grants"),
          devices: await all("devices"),
          customers: await all("customers"),
        };
      };
      const run = (text: string) => importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text });
      assert.deepEqual(await run(ndjson(lines)), {
        accounts: 1,
        devices: 1,
        licences: 5,
        subscriptions: 1,
        trials: 1,
        grants: 2,
        credits: 0,
        used: 0,
        unchanged: 0,
      });
      const first = await snapshot();
      assert.equal(first.grants.length, 3);

      assert.deepEqual(await run(ndjson(lines)), {
        accounts: 0,
        devices: 0,
        licences: 0,
        subscriptions: 0,
        trials: 0,
        grants: 0,
        credits: 0,
        used: 0,
        unchanged: lines.length,
      });
      assert.deepEqual(await snapshot(), first);

      // A line added to the file is written, the others are left as they are.
      const added = { ...grantLine, email: "new@example.com" };
      assert.deepEqual(await run(ndjson([...lines, added])), {
        accounts: 0,
        devices: 0,
        licences: 0,
        subscriptions: 0,
        trials: 0,
        grants: 1,
        credits: 0,
        used: 0,
        unchanged: lines.length,
      });
      const second = await snapshot();
      assert.equal(second.grants.length, 4);

      // A line that differs from what is stored is a bad line: an import never overwrites.
      const changed = await rejected(
        run(
          ndjson([
            { ...lines[1], seats: 3 },
            { ...lines[2], status: "revoked" },
            { ...lines[3], amount_cents: 5900 },
            { ...lines[5], status: "canceled" },
            { ...lines[7], ends_at: "2026-11-16T00:00:00Z" },
            { ...grantLine, note: "changed" },
            { ...lines[10], platform: "macos" },
          ]),
        ),
      );
      assert.deepEqual(changed.problems, [
        { line: 1, message: `licence id ${team} exists already with seats 2, not 3` },
        { line: 2, message: "a licence of seat@example.org purchased 2026-11-01T00:00:00.000Z exists already with status active, not revoked" },
        { line: 3, message: `licence id ${bought} exists already with amount_cents 4900, not 5900` },
        { line: 4, message: "subscription sub_twice exists already with status active, not canceled" },
        { line: 5, message: "t@example.com has a trial of tabmaster already; a person has one trial per tool" },
        { line: 6, message: "a grant of tabmaster to g@example.com from 2026-11-01T00:00:00.000Z exists already with note none, not changed" },
        { line: 7, message: 'the device "Chrome" of Ada.Lovelace@gmail.com created 2026-11-01T00:00:00.000Z exists already with platform none, not macos' },
      ]);
      assert.deepEqual(await snapshot(), second);
    });

    test("a file of several batches is checked whole before any batch is written", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const team = licenceId();
      const run = (lines: object[]) => importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson(lines) });
      // 2,501 lines: three batches of 1,000; the seats of the first line's team fill up in the third.
      const lines: object[] = [{ type: "licence", id: team, email: "it@example.org", tool: "tabmaster", seats: 1_250, purchased_at: PAST }];
      for (let i = 1; i <= 2_500; i++) {
        lines.push(
          i % 2 === 0
            ? { type: "licence", email: `seat${i}@example.org`, team_licence: team, purchased_at: PAST }
            : { ...grantLine, email: `g${i}@example.com` },
        );
      }
      const full = await rejected(run([...lines, { type: "licence", email: "one-too-many@example.org", team_licence: team, purchased_at: PAST }]));
      assert.deepEqual(full.problems, [{ line: 2_502, message: `team_licence ${team} has 1250 seats, all in use` }]);
      const late = await rejected(run([...lines.slice(0, 2_400), { ...grantLine, tool: "ghost" }, ...lines.slice(2_400)]));
      assert.deepEqual(late.problems, [{ line: 2_401, message: 'no tool "ghost" in this workspace' }]);
      assert.deepEqual(await rowsOf(services, ws.workspaceId), NOTHING);

      const progress: ImportProgress[] = [];
      const counts = await importNdjson(
        services.db,
        services.clock,
        { workspace: ws.slug, env: "test", text: ndjson(lines) },
        { onProgress: (p) => progress.push(p) },
      );
      assert.deepEqual(counts, { accounts: 0, devices: 0, licences: 1_251, subscriptions: 0, trials: 0, grants: 1_250, credits: 0, used: 0, unchanged: 0 });
      assert.deepEqual(await rowsOf(services, ws.workspaceId), {
        people: 2_501,
        licences: 1_251,
        subscriptions: 0,
        grants: 1_250,
        devices: 0,
        customers: 2_500,
      });
      assert.deepEqual(
        progress.map((p) => [p.phase, p.lines, p.totalLines, p.written]),
        [
          ["check", 1_000, null, 0],
          ["check", 2_000, null, 0],
          ["check", 2_501, null, 0],
          ["write", 1_000, 2_501, 1_000],
          ["write", 2_000, 2_501, 2_000],
          ["write", 2_501, 2_501, 2_501],
        ],
      );
      assert.equal(progress.at(-1)?.bytes, progress.at(-1)?.totalBytes);
    });

    if (dialect === "postgres")
      test("after its first batch the tables' statistics are taken again, so the later batches are planned for their size", async () => {
        const { services } = await testServices(dialect);
        const ws = await seedCatalogue(services);
        const analysedRows = async () =>
          Number((await sql<{ n: number }>`select reltuples as n from pg_class where oid = 'customers'::regclass`.execute(services.db)).rows[0]?.n);
        // -1 when never analysed (this file's earlier imports analysed it, if they ran first).
        const before = Math.max(0, await analysedRows());
        const lines = Array.from({ length: 1_500 }, (_, i) => ({ ...grantLine, email: `stat${i}@example.com` }));
        await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson(lines) });
        const after = await analysedRows();
        assert.ok(after >= before + 1_000, `analysed with the first batch's 1,000 rows at least: ${before} -> ${after}`);
      });

    test("a file with more bad lines than are listed says how many more", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const lines = Array.from({ length: 1_005 }, () => "{not json");
      const error = await rejected(importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: ndjson(lines) }));
      assert.equal(error.problems.length, 1_000);
      const message = error.message.split("\n");
      assert.equal(message[0], "The input has 1005 bad lines; nothing was imported.");
      assert.equal(message.at(-1), "… and 5 more bad lines.");
    });

    test("an account line lists the person for each of its tools from its sign-in", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const signedIn = clock.now() - 7 * DAY_MS;
      await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "live",
        text: ndjson([{ type: "account", email: "Mia@Example.com", signed_in_at: toIso(signedIn), tools: ["linkkeeper"] }]),
      });
      const listed = await api.request({ url: "/api/v1/tools/linkkeeper/customers", key: ws.liveKey });
      assert.deepEqual(listed.json().data, [
        { email: "Mia@Example.com", account: true, entitled: false, via: null, since: toIso(signedIn), last_active_at: null, devices: 0 },
      ]);
      const other = await api.request({ url: "/api/v1/tools/tabmaster/customers", key: ws.liveKey });
      assert.deepEqual(other.json().data, []);
    });
  });
}

describe("warden admin import on the command line", () => {
  test("prints counts, or every bad line and exits 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-import-"));
    try {
      let out = "";
      let err = "";
      const io = {
        stdout: (t: string) => {
          out += t;
        },
        stderr: (t: string) => {
          err += t;
        },
        env: { WARDEN_DATA_DIR: dir },
      };
      const run = async (...argv: string[]) => {
        out = "";
        err = "";
        return main(argv, io);
      };
      assert.equal(await run("admin", "owner", "create", "--email", "owner@example.com"), 0, err);
      assert.equal(await run("admin", "workspace", "create", "--slug", "acme", "--name", "Acme", "--owner", "owner@example.com"), 0, err);
      assert.equal(await run("admin", "tool", "create", "--workspace", "acme", "--id", "tabmaster", "--name", "Tab Master"), 0, err);
      const meter = ["--workspace", "acme", "--tool", "tabmaster", "--name", "Summaries", "--unit", "summaries"];
      assert.equal(await run("admin", "meter", "add", ...meter, "--id", "summaries", "--free", "10"), 0, err);
      assert.equal(await run("admin", "meter", "add", ...meter, "--id", "pages", "--name", "Pages", "--unit", "pages"), 0, err);

      const good = join(dir, "good.ndjson");
      await writeFile(
        good,
        ndjson([
          { type: "account", email: "ada@example.com", signed_in_at: "2025-01-01T00:00:00Z", tools: ["tabmaster"] },
          {
            type: "grant",
            email: "ada@example.com",
            tool: "tabmaster",
            starts_at: "2025-01-01T00:00:00Z",
            ends_at: null,
            used: { summaries: 4, pages: 0 },
            credits: { summaries: { amount: 300 }, pages: { amount: 20 } },
          },
          { type: "trial", email: "bob@example.com", tool: "tabmaster", starts_at: "2025-01-01T00:00:00Z", ends_at: "2025-01-15T00:00:00Z" },
        ]),
      );
      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "live", good, "--json"), 0, err);
      // Ada's grant wrote two credit entries and one counter (nothing used of pages: no counter).
      assert.deepEqual(JSON.parse(out), { accounts: 1, devices: 0, licences: 0, subscriptions: 0, trials: 1, grants: 1, credits: 2, used: 1, unchanged: 0 });
      assert.equal(err, "", "with --json and no terminal, nothing but the summary");
      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "test", good), 0, err);
      assert.equal(
        out,
        "Imported accounts: 1, devices: 0, licences: 0, subscriptions: 0, trials: 1, grants: 1, credit entries: 2, used counters: 1; 0 lines stored already as they are (unchanged).\n",
      );
      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "test", good), 0, err);
      assert.equal(
        out,
        "Imported accounts: 0, devices: 0, licences: 0, subscriptions: 0, trials: 0, grants: 0, credit entries: 0, used counters: 0; 3 lines stored already as they are (unchanged).\n",
      );

      const bad = join(dir, "bad.ndjson");
      await writeFile(
        bad,
        ndjson([
          { type: "grant", email: "ok@example.com", tool: "tabmaster", starts_at: "2025-01-01T00:00:00Z" },
          { type: "grant", email: "nope", tool: "tabmaster", starts_at: "2025-01-01T00:00:00Z" },
          { type: "grant", email: "ok@example.com", tool: "ghost", starts_at: "2025-01-01T00:00:00Z" },
        ]),
      );
      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "test", bad), 1);
      assert.equal(out, "");
      assert.equal(
        err,
        [
          `warden: ${bad} has 2 bad lines; nothing was imported.`,
          'line 2: email "nope" is not an email address such as person@example.com',
          'line 3: no tool "ghost" in this workspace',
          "",
        ].join("\n"),
      );
      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "test", bad, "--json"), 1);
      assert.deepEqual(JSON.parse(err).error.param, "FILE");

      assert.equal(await run("admin", "import", "--workspace", "acme", "--env", "test", join(dir, "missing.ndjson")), 1);
      assert.equal(err, `warden: Cannot read ${join(dir, "missing.ndjson")}: ENOENT.\n`);
      assert.equal(await run("admin", "import", "--workspace", "acme", good), 2);
      assert.match(err, /--env is required/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
