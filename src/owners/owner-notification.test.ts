import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type Actor, recordAction } from "../audit/audit.service.js";
import { createWorkspaceKey } from "../auth/key.service.js";
import { connectStripe } from "../stripe/stripe-account.service.js";
import { dashboardApp, dashboardServices, readMail, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, testApi, unique } from "../test-support/harness.js";
import { createOwner } from "../workspaces/workspace.service.js";
import { inviteOwner, removeOwner } from "../workspaces/workspace-owners.service.js";
import { addWorkspaceOwner } from "../workspaces/workspace-owners.store.js";

const notification = (text: string) => text.includes("Every owner of the workspace gets this mail.");

/** A workspace with two owners; answers them both. */
async function twoOwners(env: Awaited<ReturnType<typeof dashboardServices>>) {
  const ws = await seedWorkspace(env.services);
  const other = await createOwner(env.services.db, env.clock, { email: `${unique("co")}@example.com` });
  await addWorkspaceOwner(env.services.db, ws.workspaceId, other.id, env.clock.now());
  const owner = await env.services.db.selectFrom("owners").select("id").where("email", "=", ws.ownerEmail).executeTakeFirstOrThrow();
  const actor: Actor = { ownerId: owner.id, email: ws.ownerEmail, from: { ip: "203.0.113.9", userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0" } };
  return { ws, other, actor };
}

for (const dialect of DIALECTS) {
  describe(`owners' notification mails (${dialect})`, () => {
    test("an endpoint added in the dashboard: every owner is told what, when, from which address and browser, and where to end all sessions", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const { ws, other } = await twoOwners(env);
      const browser = new TestBrowser(app, "10.7.7.7");
      await browser.signIn(env.dataDir, ws.ownerEmail);
      await browser.get(`/dashboard/w/${ws.slug}/test/webhooks`);
      const added = await browser.post(
        `/dashboard/w/${ws.slug}/test/webhooks`,
        { url: "http://127.0.0.1:9/hook" },
        { "user-agent": "Mozilla/5.0 TestBrowser/1.0" },
      );
      assert.equal(added.statusCode, 303);
      const endpoint = /\/webhooks\/(ep_\w{24})\//.exec(String(added.headers.location))?.[1];
      assert.ok(endpoint);
      for (const to of [ws.ownerEmail, other.email]) {
        const mail = (await readMail(env.dataDir, to, notification)) ?? "";
        assert.match(mail, /Subject: Warden: a webhook endpoint was added in Test workspace \(test\)/);
        assert.ok(mail.includes(`A webhook endpoint (${endpoint}) was added to Test workspace (test)`), mail);
        assert.ok(mail.includes(`By: ${ws.ownerEmail}\nWhen: 2026-11-21 12:00 UTC\nFrom: 10.7.7.7, Mozilla/5.0 TestBrowser/1.0\n`), mail);
        assert.match(mail, /open \/dashboard\/sessions on your Warden dashboard and end all sessions/);
      }
    });

    test("a live key is told of, a test key is not; Stripe's secrets, invitations and removals are", async () => {
      const env = await dashboardServices(dialect);
      const { ws, other, actor } = await twoOwners(env);
      const mailsTo = async (to: string) => {
        await readMail(env.dataDir, to);
        const dir = join(env.dataDir, "outbox");
        const files = await readdir(dir).catch(() => []);
        const texts = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
        return texts.filter((t) => t.includes(`\nTo: ${to}\n`) && notification(t));
      };
      await createWorkspaceKey(env.services, actor, { workspaceId: ws.workspaceId, env: "test", name: "ci" });
      assert.equal((await mailsTo(other.email)).length, 0, "a test key is not told of");
      const live = await createWorkspaceKey(env.services, actor, { workspaceId: ws.workspaceId, env: "live", name: "prod" });
      assert.ok((await mailsTo(other.email)).some((m) => m.includes(`A live API key (${live.id}) was created in Test workspace.`)));
      await connectStripe(env.services, { workspace: ws.slug, env: "test", webhookSecret: `whsec_${"a".repeat(32)}` }, actor);
      assert.ok((await mailsTo(other.email)).some((m) => m.includes("Stripe's secrets for Test workspace (test) were changed.")));
      const invited = `${unique("inv")}@example.com`;
      await inviteOwner(env.services, { workspace: ws.slug, email: invited, baseUrl: "https://warden.example.com" }, actor);
      assert.ok((await mailsTo(other.email)).some((m) => m.includes(`${invited} was invited to co-own Test workspace.`)));
      await removeOwner(env.services, { workspace: ws.slug, email: other.email }, actor);
      // The removed owner is told too, though no longer an owner.
      for (const to of [ws.ownerEmail, other.email]) {
        assert.ok((await mailsTo(to)).some((m) => m.includes(`${other.email} was removed from the owners of Test workspace.`)));
      }
      assert.equal((await mailsTo(ws.ownerEmail)).length, 4);
    });

    test("an endpoint added and its secret revealed with an API key: owners are told which key, from where", async () => {
      const env = await dashboardServices(dialect);
      const { ws, other } = await twoOwners(env);
      const api = await testApi(env.services);
      const headers = { "user-agent": "curl/8.5.0" };
      const added = await api.request({
        method: "POST",
        url: "/api/v1/webhooks/endpoints",
        key: ws.liveKey,
        payload: { url: "http://127.0.0.1:9/hook" },
        headers,
      });
      assert.equal(added.statusCode, 201, added.body);
      const id = added.json().endpoint.id as string;
      const keyId = (
        await env.services.db.selectFrom("api_keys").select("id").where("workspace_id", "=", ws.workspaceId).where("env", "=", "live").executeTakeFirstOrThrow()
      ).id;
      const mail = (await readMail(env.dataDir, other.email, notification)) ?? "";
      assert.ok(mail.includes(`A webhook endpoint (${id}) was added to Test workspace (live)`), mail);
      assert.match(mail, new RegExp(`By: the API key ${keyId}\nWhen: 2026-11-21 12:00 UTC\nFrom: [0-9.]+, curl/8.5.0\n`));
      assert.match(mail, /revoke it on the dashboard's API keys page/);
      assert.equal((await api.request({ method: "GET", url: `/api/v1/webhooks/endpoints/${id}/secret`, key: ws.liveKey, headers })).statusCode, 200);
      assert.match((await readMail(env.dataDir, ws.ownerEmail, notification)) ?? "", /The signing secret of webhook endpoint .* was revealed/);
      // Pointing it elsewhere is told too: the endpoint receives buyers' addresses.
      const edited = await api.request({
        method: "PATCH",
        url: `/api/v1/webhooks/endpoints/${id}`,
        key: ws.liveKey,
        payload: { url: "https://elsewhere.example/hook" },
        headers,
      });
      assert.equal(edited.statusCode, 200, edited.body);
      assert.match(
        (await readMail(env.dataDir, other.email, notification)) ?? "",
        new RegExp(`Webhook endpoint ${id} in Test workspace \\(live\\) was edited: its URL or the events it receives may have changed`),
      );
    });

    test("written in the action's transaction: an action that rolls back mails nobody", async () => {
      const env = await dashboardServices(dialect);
      const { ws, other, actor } = await twoOwners(env);
      await assert.rejects(
        env.services.db.transaction().execute(async (trx) => {
          await recordAction(trx, actor, { action: "endpoint.secret_revealed", workspaceId: ws.workspaceId, env: "live", subject: "ep_x" }, env.clock.now());
          throw new Error("the reveal failed");
        }),
      );
      assert.equal(await readMail(env.dataDir, other.email), null);
      await env.services.db
        .transaction()
        .execute((trx) =>
          recordAction(trx, actor, { action: "endpoint.secret_revealed", workspaceId: ws.workspaceId, env: "live", subject: "ep_x" }, env.clock.now()),
        );
      assert.match((await readMail(env.dataDir, other.email)) ?? "", /The signing secret of webhook endpoint ep_x in Test workspace \(live\) was revealed/);
    });
  });
}
