import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, MINUTE_MS } from "../clock.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { updateTool } from "../workspaces/workspace.service.js";

const mailbox = testMailbox();
const { signIn } = clientCalls(mailbox);

for (const dialect of DIALECTS) {
  describe(`grants (${dialect})`, () => {
    test("a created grant entitles its address however it is spelled and is listed; revoked (twice: the first time stays), it entitles no more", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);

      const created = await api.request({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        key: ws.testKey,
        payload: { email: "Ada.Lovelace@gmail.com", days: 30, note: "beta tester" },
      });
      assert.equal(created.statusCode, 201, created.body);
      const grant = created.json();
      assert.match(grant.id, /^gr_[0-9A-Za-z]{24}$/);
      assert.equal(grant.tool, ws.tool);
      assert.equal(grant.email, "Ada.Lovelace@gmail.com");
      assert.equal(grant.kind, "grant");
      assert.equal(grant.live, true);
      assert.equal(grant.revoked_at, null);
      assert.equal(grant.note, "beta tester");
      assert.equal(grant.plan, null, "names no plan: the tool's top terms");
      assert.equal(Date.parse(grant.ends_at) - Date.parse(grant.starts_at), 30 * DAY_MS);

      const customer = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent("adalovelace@googlemail.com")}`, key: ws.testKey });
      assert.equal(customer.statusCode, 200, customer.body);
      assert.deepEqual(customer.json(), {
        email: "Ada.Lovelace@gmail.com",
        account: false,
        entitled: true,
        via: "grant",
        paid_at: null,
        plan: null,
        subscription: null,
        trial: null,
        features: [],
      });

      const list = await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=ada.lovelace%40gmail.com`, key: ws.testKey });
      assert.equal(list.statusCode, 200);
      assert.deepEqual(
        list.json().data.map((g: { id: string }) => g.id),
        [grant.id],
      );

      clock.advance(1000);
      const revoked = await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${grant.id}`, key: ws.testKey });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.deepEqual(revoked.json(), { id: grant.id, tool: ws.tool, revoked_at: "2026-11-21T12:00:01.000Z", live: false });

      clock.advance(1000);
      const again = await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${grant.id}`, key: ws.testKey });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().revoked_at, revoked.json().revoked_at);

      const after = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/ada.lovelace%40gmail.com`, key: ws.testKey });
      assert.equal(after.json().entitled, false);
      assert.equal(after.json().via, null);
    });

    test("lists an address's grants and trials newest first", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "14" });
      const email = `grace.${ws.slug}@example.com`;
      const grant = async (note: string) => {
        const created = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30, note } });
        assert.equal(created.statusCode, 201, created.body);
        return created.json().id as string;
      };

      const oldest = await grant("first");
      clock.advance(5 * MINUTE_MS);
      const token = await signIn(api, ws, email);
      const started = await api.request({ method: "POST", url: `/api/client/v1/tools/${ws.tool}/trial`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(started.statusCode, 201, started.body);
      const trial = started.json().id as string;
      clock.advance(5 * MINUTE_MS);
      const newest = await grant("third");

      const list = await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=${encodeURIComponent(email)}`, key: ws.testKey });
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(
        list.json().data.map((g: { id: string; kind: string }) => [g.id, g.kind]),
        [
          [newest, "grant"],
          [trial, "trial"],
          [oldest, "grant"],
        ],
      );
    });
  });
}
