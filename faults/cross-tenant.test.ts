// One workspace's faults must stay its own. An attacker workspace sends malformed requests
// (NUL and other poison in addresses, notes and queries), runs over its limits and posts
// junk to the victim's Stripe route, all at once with the victim's ordinary traffic, in
// one process (where concurrent requests share batched statements). Every one of the
// victim's requests must answer 200 with its own, unchanged data.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../src/test-support/harness.js";
import { bySize, recordFigures } from "./fault-support.js";

const ROUNDS = bySize({ smoke: 3, default: 10, large: 50 });
const HOLDERS = 3;
// Lookups a workspace may make in the test: enough for the poisoner's malformed lookups
// to reach the database every round, too few for the greedy workspace's.
const LOOKUPS_PER_ROUND = 35;

const POISON = [
  "a%00b%40example.com",
  "%00",
  "nul%00",
  "%F0%9F%92%A9%00%40example.com",
  encodeURIComponent("\u212Aelvin@example.com"),
  "%C0%80%40example.com",
  "%ED%A0%80",
  "x".repeat(500),
  "%25",
  "..%2F..%2F",
];

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

for (const dialect of DIALECTS) {
  describe(`cross-tenant faults (${dialect})`, () => {
    test(`${ROUNDS} rounds: an attacker's malformed and over-limit traffic changes nothing in the victim's concurrent answers`, async () => {
      const { services } = await testServices(dialect, {
        WARDEN_LIMIT_LOOKUPS_PER_DAY: String(LOOKUPS_PER_ROUND * ROUNDS),
        WARDEN_LIMIT_HOBBY_PASSES: "5",
        WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "10",
        WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "1000000",
      });
      const api = await testApi(services);
      const victim = await seedWorkspace(services);
      // Two attackers: one sends poison, the other runs over its limits.
      const attacker = await seedWorkspace(services);
      const greedy = await seedWorkspace(services, { plan: "hobby" });
      const inject = (options: InjectOptions & { key?: string; from: string }) => {
        const { key, from, ...rest } = options;
        return api.app.inject({ ...rest, remoteAddress: from, headers: { ...(rest.headers ?? {}), ...(key ? { authorization: `Bearer ${key}` } : {}) } });
      };

      const holders: string[] = [];
      for (let i = 0; i < HOLDERS; i++) {
        const email = `holder-${i}-${victim.slug}@example.com`;
        const made = await inject({
          method: "POST",
          url: `/api/v1/tools/${victim.tool}/grants`,
          key: victim.testKey,
          from: "10.0.0.1",
          payload: { email, note: `n${i}` },
        });
        assert.equal(made.statusCode, 201, made.body);
        holders.push(email);
      }
      const victimList = await inject({ url: `/api/v1/tools/${victim.tool}/customers`, key: victim.testKey, from: "10.0.0.1" });
      const before = victimList.json().data.map((c: { email: string; entitled: boolean; via: string }) => [c.email, c.entitled, c.via]);

      let victimRequests = 0;
      let attackerRequests = 0;
      const attackerStatuses: Record<number, number> = {};
      const victimFailures: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const victimCalls = holders.flatMap((email) => [
          async () => {
            const r = await inject({ url: `/api/v1/tools/${victim.tool}/customers/${encodeURIComponent(email)}`, key: victim.testKey, from: "10.0.0.1" });
            const body = r.json();
            if (r.statusCode !== 200 || body.email !== email || body.entitled !== true || body.via !== "grant")
              victimFailures.push(`retrieve ${email}: ${r.statusCode} ${r.body.slice(0, 200)}`);
          },
          async () => {
            const r = await inject({ url: `/api/v1/tools/${victim.tool}/grants?email=${encodeURIComponent(email)}`, key: victim.testKey, from: "10.0.0.1" });
            const body = r.json();
            if (r.statusCode !== 200 || body.data?.length !== 1 || body.data[0].email !== email)
              victimFailures.push(`list grants ${email}: ${r.statusCode} ${r.body.slice(0, 200)}`);
          },
        ]);
        victimCalls.push(async () => {
          const r = await inject({ url: `/api/v1/tools/${victim.tool}/customers`, key: victim.testKey, from: "10.0.0.1" });
          const rows = r.statusCode === 200 ? r.json().data.map((c: { email: string; entitled: boolean; via: string }) => [c.email, c.entitled, c.via]) : null;
          if (JSON.stringify(rows) !== JSON.stringify(before)) victimFailures.push(`list customers: ${r.statusCode} ${r.body.slice(0, 200)}`);
        });
        const attack = (options: InjectOptions & { key?: string; from?: string }) => async () => {
          let r: LightMyRequestResponse;
          try {
            r = await inject({ from: "10.0.0.2", ...options });
          } catch {
            return;
          }
          attackerRequests++;
          attackerStatuses[r.statusCode] = (attackerStatuses[r.statusCode] ?? 0) + 1;
        };
        const attackerCalls = [
          ...POISON.flatMap((p) => [
            attack({ url: `/api/v1/tools/${attacker.tool}/customers/${p}`, key: attacker.testKey }),
            attack({ url: `/api/v1/tools/${attacker.tool}/grants?email=${p}`, key: attacker.testKey }),
            attack({ url: `/api/v1/tools/${victim.tool}/customers/${p}`, key: attacker.testKey, headers: { host: `${victim.slug}.warden.test` } }),
          ]),
          attack({ method: "POST", url: `/api/v1/tools/${attacker.tool}/grants`, key: attacker.testKey, payload: { email: "nul\u0000@example.com" } }),
          attack({
            method: "POST",
            url: `/api/v1/tools/${attacker.tool}/grants`,
            key: attacker.testKey,
            payload: { email: "x@example.com", note: "a\u0000b" },
          }),
          // Over the greedy workspace's limits: lookups, Hobby passes; and wrong keys (from an address of their own: past its limit, every request from it is refused).
          ...Array.from({ length: LOOKUPS_PER_ROUND + 15 }, (_, i) =>
            attack({ url: `/api/v1/tools/${greedy.tool}/customers/over-${i}%40example.com`, key: greedy.testKey }),
          ),
          ...Array.from({ length: 4 }, (_, i) =>
            attack({ method: "POST", url: `/api/v1/tools/${greedy.tool}/grants`, key: greedy.testKey, payload: { email: `p${round}-${i}@example.com` } }),
          ),
          ...Array.from({ length: 8 }, (_, i) =>
            attack({ url: "/api/v1/webhooks/endpoints", key: `wk_test_${String(round * 100 + i).padStart(32, "0")}`, from: "10.0.0.3" }),
          ),
          // Junk to the victim's Stripe route: no signature, a wrong one, a huge amount.
          attack({ method: "POST", url: `/processor/stripe/${victim.slug}`, headers: { "content-type": "application/json" }, payload: '{"amount":1e300}' }),
          attack({
            method: "POST",
            url: `/processor/stripe/${victim.slug}`,
            headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
            payload: JSON.stringify({ type: "charge.refunded", data: { object: { payment_intent: "pi_x", amount_refunded: 1e300 } } }),
          }),
          attack({ method: "POST", url: `/processor/stripe/${victim.slug}%00`, headers: { "content-type": "application/json" }, payload: "{}" }),
        ];
        victimRequests += victimCalls.length;
        await Promise.all(shuffle([...victimCalls, ...attackerCalls]).map((call) => call()));
      }

      const after = await inject({ url: `/api/v1/tools/${victim.tool}/customers`, key: victim.testKey, from: "10.0.0.1" });
      assert.equal(after.statusCode, 200);
      const fiveXx = Object.entries(attackerStatuses)
        .filter(([s]) => Number(s) >= 500)
        .reduce((n, [, c]) => n + c, 0);
      recordFigures(`cross-tenant-${dialect}`, {
        rounds: ROUNDS,
        victimRequests,
        victimFailures: victimFailures.length,
        attackerRequests,
        attackerFiveXx: fiveXx,
        attackerStatuses,
      });
      assert.deepEqual(victimFailures.slice(0, 10), [], `${victimFailures.length} of the victim's ${victimRequests} requests were answered wrongly`);
      assert.deepEqual(
        after.json().data.map((c: { email: string; entitled: boolean; via: string }) => [c.email, c.entitled, c.via]),
        before,
      );
    });
  });
}
