import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertAuditEntry } from "../../audit/audit.store.js";
import type { Env } from "../../db/schema.js";
import type { Services } from "../../services.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../../test-support/harness.js";

const DAY = 86_400_000;
/** 2026-11-10T00:00:00Z: the entries below are written on days counted from it. */
const START = Date.parse("2026-11-10T00:00:00Z");

async function ownerIdOf(services: Services, email: string): Promise<string> {
  return (await services.db.selectFrom("owners").select("id").where("email", "=", email).executeTakeFirstOrThrow()).id;
}

/** Writes entries straight into the log, as the use cases' recordAction would, at the times given. */
async function writeEntries(
  services: Services,
  entries: { ownerId: string; email: string; workspaceId: string | null; env: Env | null; action: string; subject: string; at: number }[],
) {
  for (const e of entries) {
    await insertAuditEntry(services.db, {
      id: `aud_${unique("t")}`,
      actor: { ownerId: e.ownerId, email: e.email },
      workspaceId: e.workspaceId,
      env: e.env,
      action: e.action,
      subject: e.subject,
      createdAt: e.at,
    });
  }
}

/** The subjects a page lists, in its order. */
const subjects = (body: string) => [...body.matchAll(/<td[^>]*><code>(s-[\w-]+)<\/code><\/td>/g)].map((m) => m[1]);
const href = (body: string, label: string) => {
  const found = new RegExp(`<a class="button small" href="([^"]+)">${label}</a>`).exec(body)?.[1];
  return found?.replaceAll("&amp;", "&");
};

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedWorkspace(env.services);
  const other = await seedWorkspace(env.services);
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  const ownerId = await ownerIdOf(env.services, ws.ownerEmail);
  const otherOwnerId = await ownerIdOf(env.services, other.ownerEmail);
  return { env, app, ws, other, browser, ownerId, otherOwnerId, log: `/dashboard/w/${ws.slug}/test/audit` };
}

for (const dialect of DIALECTS) {
  describe(`dashboard audit log (${dialect})`, () => {
    test("pages a workspace environment's log 50 at a time, newest first, Older then Newer, with its workspace-wide entries", async () => {
      const { env, ws, browser, ownerId, log } = await setUp(dialect);
      // 120 test entries, one an hour, and every tenth hour a workspace-wide one (env null).
      await writeEntries(
        env.services,
        Array.from({ length: 120 }, (_, i) => ({
          ownerId,
          email: ws.ownerEmail,
          workspaceId: ws.workspaceId,
          env: i % 10 === 0 ? null : ("test" as const),
          action: i % 10 === 0 ? "tool.created" : "key.created",
          subject: `s-${String(i).padStart(3, "0")}`,
          at: START + i * 3_600_000,
        })),
      );
      const first = await browser.get(log);
      assert.equal(first.statusCode, 200);
      const expected = Array.from({ length: 120 }, (_, i) => `s-${String(119 - i).padStart(3, "0")}`);
      assert.deepEqual(subjects(first.body), expected.slice(0, 50));
      assert.equal(href(first.body, "← Newer"), undefined, "the first page has nothing newer");
      const olderLink = href(first.body, "Older →");
      assert.ok(olderLink);
      const second = await browser.get(olderLink);
      assert.deepEqual(subjects(second.body), expected.slice(50, 100));
      const thirdLink = href(second.body, "Older →");
      assert.ok(thirdLink);
      const third = await browser.get(thirdLink);
      assert.deepEqual(subjects(third.body), expected.slice(100));
      assert.equal(href(third.body, "Older →"), undefined, "the last page has nothing older");
      // Back: Newer from the last page is the second page again, then the first.
      const back = await browser.get(href(third.body, "← Newer") as string);
      assert.deepEqual(subjects(back.body), expected.slice(50, 100));
      const top = await browser.get(href(back.body, "← Newer") as string);
      assert.deepEqual(subjects(top.body), expected.slice(0, 50));
      assert.equal(href(top.body, "← Newer"), undefined, "back at the newest, nothing newer");
      // Breadcrumbs: workspace › Test › Audit log, the last marked current.
      assert.match(
        first.body,
        /<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li><a href="[^"]+">Test workspace<\/a><\/li><li><a [^>]+>Test<\/a><\/li><li><span aria-current="page">Audit log<\/span><\/li><\/ol><\/nav>/,
      );
      // The account's log says where it is once (it read "Account › All workspaces' log › Audit log").
      const account = await browser.get("/dashboard/audit");
      assert.match(
        account.body,
        /<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li>Account<\/li><li><span aria-current="page">All workspaces&#39; log<\/span><\/li><\/ol><\/nav>/,
      );
      assert.match(account.body, /<h1>All workspaces&#39; log<\/h1>/);
    });

    test("filters by owner, action and UTC days, and a cursor keeps the filters it was made for", async () => {
      const { env, ws, browser, ownerId, otherOwnerId, log } = await setUp(dialect);
      const base = { workspaceId: ws.workspaceId, env: "test" as const };
      await writeEntries(env.services, [
        { ...base, ownerId, email: ws.ownerEmail, action: "key.created", subject: "s-day1-key", at: START + 23 * 3_600_000 },
        { ...base, ownerId, email: ws.ownerEmail, action: "key.revoked", subject: "s-day2-revoke", at: START + DAY },
        { ...base, ownerId: otherOwnerId, email: "former@example.com", action: "key.created", subject: "s-day2-former", at: START + DAY + 1000 },
        { ...base, ownerId, email: ws.ownerEmail, action: "key.created", subject: "s-day3-key", at: START + 2 * DAY + 5 },
      ]);
      const q = (params: Record<string, string>) => `${log}?${new URLSearchParams(params)}`;
      assert.deepEqual(subjects((await browser.get(q({ action: "key.created" }))).body), ["s-day3-key", "s-day2-former", "s-day1-key"]);
      assert.deepEqual(subjects((await browser.get(q({ owner: ownerId }))).body), ["s-day3-key", "s-day2-revoke", "s-day1-key"]);
      // Days are UTC and both ends are included: the 11th alone is its whole day.
      assert.deepEqual(subjects((await browser.get(q({ from: "2026-11-11", to: "2026-11-11" }))).body), ["s-day2-former", "s-day2-revoke"]);
      assert.deepEqual(subjects((await browser.get(q({ from: "2026-11-11" }))).body), ["s-day3-key", "s-day2-former", "s-day2-revoke"]);
      assert.deepEqual(subjects((await browser.get(q({ to: "2026-11-10" }))).body), ["s-day1-key"]);
      const none = await browser.get(q({ action: "owner.removed" }));
      assert.equal(none.statusCode, 200);
      assert.match(none.body, /Nothing matches/);
      // The form shows what was chosen, so the address can be shared and read back.
      assert.match((await browser.get(q({ action: "key.revoked" }))).body, /<option value="key.revoked" selected>/);

      // A cursor made for one filter is refused under another: it cannot widen what it narrowed.
      await writeEntries(
        env.services,
        Array.from({ length: 55 }, (_, i) => ({
          ...base,
          ownerId,
          email: ws.ownerEmail,
          action: "grant.created",
          subject: `s-g${i}`,
          at: START + 3 * DAY + i,
        })),
      );
      const older = href((await browser.get(q({ action: "grant.created" }))).body, "Older →");
      assert.ok(older);
      const cursor = new URL(older, "http://x").searchParams.get("older") as string;
      const swapped = await browser.get(q({ action: "key.created", older: cursor }));
      assert.equal(swapped.statusCode, 400);
      assert.match(swapped.body, /not a next_cursor of this list/);
      assert.equal(subjects(swapped.body).length, 0);
    });

    test("an entry leads with the name of what it was about (a key, an endpoint, an event, a tool), its id under it", async () => {
      const { env, ws, other, browser, ownerId, log } = await setUp(dialect);
      const keys = `/dashboard/w/${ws.slug}/test/keys`;
      await browser.get(keys);
      assert.equal((await browser.post(keys, { name: "Order <b>system</b>" })).statusCode, 303);
      const webhooks = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(webhooks);
      const added = await browser.post(webhooks, { url: "https://hooks.example.com/warden", description: "Fulfilment" });
      const endpoint = /\/webhooks\/(ep_\w+)/.exec(String(added.headers.location))?.[1];
      assert.ok(endpoint);
      assert.equal((await browser.post(`${webhooks}/${endpoint}/test`, { type: "purchase.completed" })).statusCode, 303);
      // A tool of this workspace and one named like another workspace's tool, which is never named here.
      await writeEntries(env.services, [
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: null, action: "tool.updated", subject: ws.tool, at: env.clock.now() },
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: null, action: "tool.updated", subject: "s-not-a-tool", at: env.clock.now() },
      ]);
      const body = (await browser.get(log)).body;
      const key = /<td[^>]*>Order &lt;b&gt;system&lt;\/b&gt; <code class="id-secondary">(key_\w+)<\/code><\/td>/.exec(body)?.[1];
      assert.ok(key, "the key by its name, escaped, its id under it");
      assert.ok(body.includes(`<td data-label="On">Fulfilment <code class="id-secondary">${endpoint}</code></td>`), "the endpoint by its description");
      assert.match(body, /<td[^>]*>purchase\.completed <code class="id-secondary">evt_\w+<\/code><\/td>/, "the test event by its type");
      assert.ok(body.includes(`<td data-label="On">Tab Master <code class="id-secondary">${ws.tool}</code></td>`), "the tool by its name");
      assert.deepEqual(subjects(body), ["s-not-a-tool"], "what has no name keeps its id");
      assert.ok(!body.includes(other.slug));
    });

    test("a filter it cannot read is told beside its field, never a 500, and shows no entries", async () => {
      const { env, ws, browser, ownerId, log } = await setUp(dialect);
      await writeEntries(env.services, [
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: "test", action: "key.created", subject: "s-any", at: START },
      ]);
      const cases: [Record<string, string>, string, RegExp][] = [
        [{ action: "key.exploded" }, "action", /Choose an action from the list/],
        [{ owner: "x'; drop table audit_log; --" }, "owner", /Choose an owner from the list/],
        [{ from: "2026-02-30" }, "from", /Enter the first day as a date/],
        [{ to: "yesterday" }, "to", /Enter the last day as a date/],
        [{ from: "2026-11-12", to: "2026-11-11" }, "to", /The last day must be the first day or after it/],
        [{ older: "garbage" }, "", /not a next_cursor of this list/],
      ];
      for (const [params, field, message] of cases) {
        const page = await browser.get(`${log}?${new URLSearchParams(params)}`);
        assert.equal(page.statusCode, 400, JSON.stringify(params));
        assert.match(page.body, message);
        if (field) assert.match(page.body, new RegExp(`id="${field}" name="${field}"[^>]* aria-invalid="true" aria-describedby="${field}-error"`));
        assert.equal(subjects(page.body).length, 0);
      }
      // Both cursors at once is a refusal too, not a guess.
      assert.equal((await browser.get(`${log}?older=a.b&newer=a.b`)).statusCode, 400);
    });
  });

  describe(`dashboard audit log security (${dialect})`, () => {
    test("another environment's and another workspace's entries never show; another workspace's log answers as not found", async () => {
      const { env, ws, other, browser, ownerId, otherOwnerId, log } = await setUp(dialect);
      await writeEntries(env.services, [
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: "test", action: "key.created", subject: "s-mine-test", at: START },
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: "live", action: "key.created", subject: "s-mine-live", at: START + 1 },
        { ownerId, email: ws.ownerEmail, workspaceId: ws.workspaceId, env: null, action: "tool.created", subject: "s-mine-both", at: START + 2 },
        { ownerId, email: ws.ownerEmail, workspaceId: null, env: null, action: "signed_in", subject: "s-account", at: START + 3 },
        {
          ownerId: otherOwnerId,
          email: other.ownerEmail,
          workspaceId: other.workspaceId,
          env: "test",
          action: "key.created",
          subject: "s-theirs",
          at: START + 4,
        },
        {
          ownerId: otherOwnerId,
          email: other.ownerEmail,
          workspaceId: other.workspaceId,
          env: null,
          action: "tool.created",
          subject: "s-theirs-both",
          at: START + 5,
        },
      ]);
      assert.deepEqual(subjects((await browser.get(log)).body), ["s-mine-both", "s-mine-test"]);
      assert.deepEqual(subjects((await browser.get(`/dashboard/w/${ws.slug}/live/audit`)).body), ["s-mine-both", "s-mine-live"]);
      // Filtering by the other workspace's owner narrows this log; it never reaches theirs.
      assert.deepEqual(subjects((await browser.get(`${log}?owner=${otherOwnerId}`)).body), []);
      for (const path of [
        `/dashboard/w/${other.slug}/test/audit`,
        `/dashboard/w/${other.slug}/live/audit?owner=${otherOwnerId}`,
        `/dashboard/w/${ws.slug}/prod/audit`,
      ]) {
        const refused = await browser.get(path);
        assert.equal(refused.statusCode, 404, path);
        assert.doesNotMatch(refused.body, /s-theirs/);
      }
      // Signed out, the log is behind sign-in.
      const stranger = new TestBrowser(await dashboardApp(env));
      assert.equal((await stranger.get(log)).statusCode, 303);
    });
  });
}
