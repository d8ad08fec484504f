// Trials started from the client: offered per tool, once per person (normalised address),
// a grant of kind trial that retrieve-a-customer reports in `trial`. SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { updateTool } from "../workspaces/workspace.service.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);

const startTrial = (api: TestApi, tool: string, token: string) =>
  api.request({ method: "POST", url: `/api/client/v1/tools/${tool}/trial`, headers: { authorization: `Bearer ${token}` } });
const customer = (api: TestApi, ws: Workspace, email: string) =>
  api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });

for (const dialect of DIALECTS) {
  describe(`client trials (${dialect})`, () => {
    test("a tool's trial starts once per person, shows as a trial grant, and ends by itself", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `ada.lovelace.${ws.slug}@gmail.com`;
      const token = await signIn(api, ws, email);

      const offered = await startTrial(api, ws.tool, token);
      assert.equal(offered.statusCode, 400, "no trial offered yet");
      assert.equal(offered.json().error.param, "tool");

      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "14" });
      const started = await startTrial(api, ws.tool, token);
      assert.equal(started.statusCode, 201, started.body);
      const trial = started.json();
      assert.equal(trial.kind, "trial");
      assert.equal(trial.email, email);
      assert.equal(trial.starts_at, "2026-11-21T12:00:00.000Z");
      assert.equal(trial.ends_at, "2026-12-05T12:00:00.000Z", "the tool's 14 days");
      assert.equal(trial.live, true);

      const access = (await check(api, ws.tool, token)).json();
      assert.equal(access.entitled, true);
      assert.equal(access.via, "trial");
      assert.deepEqual(access.trial, { endsAt: trial.ends_at, active: true });
      const held = (await customer(api, ws, email)).json();
      assert.equal(held.via, "trial");
      assert.deepEqual(held.trial, { endsAt: trial.ends_at, active: true });
      const grants = (await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=${encodeURIComponent(email)}`, key: ws.testKey })).json();
      assert.deepEqual(
        grants.data.map((g: { id: string; kind: string }) => [g.id, g.kind]),
        [[trial.id, "trial"]],
      );

      // Asking again while it runs answers the same trial; so does another spelling of the same Gmail inbox.
      clock.advance(DAY_MS);
      const again = await startTrial(api, ws.tool, token);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().id, trial.id);
      const otherSpelling = await signIn(api, ws, email.replaceAll(".", "").replace("@gmailcom", "@googlemail.com"), {
        name: "Phone",
        platform: "kiwi-android",
      });
      const fromOther = await startTrial(api, ws.tool, otherSpelling);
      assert.equal(fromOther.statusCode, 200);
      assert.equal(fromOther.json().id, trial.id);

      // It ends by itself, and cannot be started again.
      clock.advance(13 * DAY_MS);
      const ended = (await check(api, ws.tool, token)).json();
      assert.equal(ended.entitled, false);
      assert.deepEqual(ended.trial, { endsAt: trial.ends_at, active: false });
      assert.deepEqual((await customer(api, ws, email)).json().trial, { endsAt: trial.ends_at, active: false });
      const once = await startTrial(api, ws.tool, otherSpelling);
      assert.equal(once.statusCode, 400);
      assert.equal(once.json().error.param, "tool");
      assert.match(once.json().error.message, /started once/);
      const rows = await services.db.selectFrom("grants").select("id").where("workspace_id", "=", ws.workspaceId).where("kind", "=", "trial").execute();
      assert.equal(rows.length, 1);
    });

    test("a trial is an addition and a pass: the Hobby plan's limit and the additions limit refuse it", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url, WARDEN_LIMIT_HOBBY_PASSES: "1", WARDEN_LIMIT_ADDITIONS_PER_DAY: "2" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      const api = await testApi(services);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "7" });

      const first = await signIn(api, ws, `first-${ws.slug}@example.com`);
      assert.equal((await startTrial(api, ws.tool, first)).statusCode, 201);
      const second = await signIn(api, ws, `second-${ws.slug}@example.com`);
      const refused = await startTrial(api, ws.tool, second);
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(refused.json().error.type, "plan_limit_error");

      // The refused trial was counted before the pass check and rolled back with it.
      const counted = async (workspaceId: string) =>
        (await services.db.selectFrom("counters").select("count").where("scope", "=", `additions:${workspaceId}:test`).execute()).map((c) => Number(c.count));
      assert.deepEqual(await counted(ws.workspaceId), [1]);

      // On a Pro workspace the additions limit (2 here) refuses the third addition, a grant's or a trial's.
      const pro = await seedWorkspace(services);
      await updateTool(services.db, services.clock, { workspace: pro.slug, id: pro.tool, trialDays: "7" });
      for (const n of [1, 2]) {
        const grant = await api.request({
          method: "POST",
          url: `/api/v1/tools/${pro.tool}/grants`,
          key: pro.testKey,
          payload: { email: `g${n}-${pro.slug}@example.com` },
        });
        assert.equal(grant.statusCode, 201, grant.body);
      }
      const late = await signIn(api, pro, `late-${pro.slug}@example.com`);
      const limited = await startTrial(api, pro.tool, late);
      assert.equal(limited.statusCode, 429, limited.body);
      assert.equal(limited.json().error.type, "rate_limit_error");
      assert.deepEqual(await counted(pro.workspaceId), [2]);
    });

    test("only a signed-in device of the tool starts a trial", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "7" });
      const token = await signIn(api, ws, `t-${ws.slug}@example.com`);
      assert.equal((await startTrial(api, "linkkeeper", token)).statusCode, 404);
      const anonymous = await api.request({ method: "POST", url: `/api/client/v1/tools/${ws.tool}/trial` });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().error.type, "authentication_error");
      assert.equal((await startTrial(api, ws.tool, `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`)).statusCode, 401);
    });
  });
}
