// The audit log names an entry about a licence, a subscription or a grant by its customer's
// address, the id beneath; a source of another workspace keeps its id alone. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertAuditEntry } from "../../audit/audit.store.js";
import { DAY_MS, toIso } from "../../clock.js";
import { importNdjson } from "../../import/import.service.js";
import type { Services } from "../../services.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, unique, type Workspace } from "../../test-support/harness.js";

async function holdings(services: Services, ws: Workspace, email: string) {
  const now = services.clock.now();
  const lines = [
    {
      type: "licence",
      email,
      tool: "tabmaster",
      plan: "lifetime",
      purchased_at: toIso(now - DAY_MS),
      amount_cents: 4900,
      currency: "eur",
      payment_intent: unique("pi"),
    },
    {
      type: "subscription",
      id: unique("sub"),
      email,
      tool: "tabmaster",
      plan: "monthly",
      status: "active",
      current_period_start: toIso(now - DAY_MS),
      current_period_end: toIso(now + 29 * DAY_MS),
    },
    { type: "grant", email, tool: "tabmaster", starts_at: toIso(now - DAY_MS), note: "Speaker" },
  ];
  assert.ok(await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: lines.map((l) => JSON.stringify(l)).join("\n") }));
  const one = async (table: "licences" | "subscriptions" | "grants") =>
    (await services.db.selectFrom(table).select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow()).id;
  return { licence: await one("licences"), subscription: await one("subscriptions"), grant: await one("grants") };
}

for (const dialect of DIALECTS) {
  describe(`the audit log names customers (${dialect})`, () => {
    test("a refunded licence, a cancelled subscription and a grant by their customer's address, the id beneath; another workspace's id alone", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const other = await seedCatalogue(env.services);
      const ours = await holdings(env.services, ws, "ada@example.com");
      const theirs = await holdings(env.services, other, "eve@example.com");
      const owner = await env.services.db.selectFrom("owners").select("id").where("email", "=", ws.ownerEmail).executeTakeFirstOrThrow();
      const entries: [string, string][] = [
        ["licence.refunded", ours.licence],
        ["subscription.ended", ours.subscription],
        ["grant.created", ours.grant],
        // Written by hand: an entry naming another workspace's licence is named by nothing here.
        ["licence.refunded", theirs.licence],
      ];
      for (const [i, [action, subject]] of entries.entries()) {
        await insertAuditEntry(env.services.db, {
          id: `aud_${unique("t")}`,
          actor: { ownerId: owner.id, email: ws.ownerEmail },
          workspaceId: ws.workspaceId,
          env: "test",
          action,
          subject,
          createdAt: env.clock.now() + i,
        });
      }
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const body = (await browser.get(`/dashboard/w/${ws.slug}/test/audit`)).body;
      for (const id of [ours.licence, ours.subscription, ours.grant]) {
        assert.ok(body.includes(`<td data-label="On">ada@example.com <code class="id-secondary">${id}</code></td>`), id);
      }
      assert.ok(body.includes(`<td data-label="On"><code>${theirs.licence}</code></td>`), "another workspace's licence: its id alone");
      assert.ok(!body.includes("eve@example.com"));

      // The account's log across workspaces names them too, each in its own workspace environment.
      const account = (await browser.get("/dashboard/audit")).body;
      for (const id of [ours.licence, ours.subscription, ours.grant]) {
        assert.match(account, new RegExp(`<td[^>]*>ada@example\\.com <code class="id-secondary">${id}</code></td>`), id);
      }
      assert.match(account, new RegExp(`<td[^>]*><code>${theirs.licence}</code></td>`), "written under this workspace: another's licence names nothing");
      assert.ok(!account.includes("eve@example.com"));
    });
  });
}
