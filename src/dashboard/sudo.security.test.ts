// A stolen session cookie, and no access to the owner's mailbox: every way the thief could
// mint a credential, let themselves in, or shut the owner or the vendor's server out must
// stop at a fresh code mailed to the owner; and a code mailed for one action or target
// must confirm nothing else, even with the form's hidden fields changed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { paddleStatus } from "../paddle/paddle-account.service.js";
import { stripeStatus } from "../stripe/stripe-account.service.js";
import { dashboardApp, dashboardServices, readCode, readMail, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique, type Workspace } from "../test-support/harness.js";
import { connectTestStripe } from "../test-support/stripe.js";
import { listWorkspaceOwners } from "../workspaces/workspace-owners.service.js";

const ATTACKER_SECRET = "whsec_attackersOwnSecret0123456789";
const CODE_PAGE = /name="confirm" value="1"/;

async function setUp(dialect: (typeof DIALECTS)[number]) {
  // Every code asked for counts against the address's hourly codes; this test asks for many.
  const env = await dashboardServices(dialect, { WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "100" });
  const app = await dashboardApp(env);
  const ws = await seedWorkspace(env.services);
  // The thief's browser holds the owner's session: to the server it is the owner.
  const thief = new TestBrowser(app);
  await thief.signIn(env.dataDir, ws.ownerEmail);
  const live = `/dashboard/w/${ws.slug}/live`;
  const test = `/dashboard/w/${ws.slug}/test`;
  await thief.get(`${live}/keys`);
  return { env, app, ws, thief, live, test };
}

const apiStatus = async (app: FastifyInstance, ws: Workspace, key: string) =>
  (await app.inject({ url: `/api/v1/tools/${ws.tool}/customers`, headers: { authorization: `Bearer ${key}` } })).statusCode;

for (const dialect of DIALECTS) {
  describe(`dashboard fresh-code gate (${dialect})`, () => {
    test("a stolen session mints no credential and locks nobody out without the code mailed to the owner", async () => {
      const { env, app, ws, thief, live, test: testEnv } = await setUp(dialect);
      const guess = { confirm: "1", code: "123456" };
      const wrongCode = async (url: string, fields: Record<string, string>) => {
        const asked = await thief.post(url, fields);
        assert.equal(asked.statusCode, 200, `${url} asks for a code`);
        assert.match(asked.body, CODE_PAGE);
        const guessed = await thief.post(url, { ...fields, ...guess });
        assert.equal(guessed.statusCode, 400, `${url} refuses a guessed code`);
      };

      // The Stripe signing secret, in both environments: a forged test licence is still forged.
      for (const base of [live, testEnv]) await wrongCode(`${base}/stripe`, { webhook_secret: ATTACKER_SECRET });
      for (const e of ["live", "test"] as const) assert.equal((await stripeStatus(env.services, { workspace: ws.slug, env: e })).connection, null);
      // Paddle's destination secret key, likewise, in both environments.
      for (const base of [live, testEnv]) await wrongCode(`${base}/stripe/paddle`, { webhook_secret: "pdl_ntfset_attackersOwnSecret0123" });
      for (const e of ["live", "test"] as const) assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: e })).connection, null);

      // A co-owner invitation: nothing recorded, nothing mailed to the thief.
      const thiefAddress = `${unique("thief")}@evil.example`;
      await wrongCode(`${testEnv}/owners/invite`, { email: thiefAddress });
      assert.deepEqual((await listWorkspaceOwners(env.services, { workspace: ws.slug })).invitations, []);
      assert.equal(await readMail(env.dataDir, thiefAddress), null);

      // A live webhook endpoint, which would receive every buyer's address.
      await wrongCode(`${live}/webhooks`, { url: "https://thief.example/hook" });
      assert.doesNotMatch((await thief.get(`${live}/webhooks`)).body, /thief\.example/);

      // The owner's live key, endpoint and Stripe connection: revoke, disable, disconnect all ask.
      const keyId = /\/keys\/(key_\w+)\/revoke"/.exec((await thief.get(`${live}/keys`)).body)?.[1];
      assert.ok(keyId);
      await wrongCode(`${live}/keys/${keyId}/revoke`, {});
      assert.equal(await apiStatus(app, ws, ws.liveKey), 200, "the live key still works");

      await connectTestStripe(env.services, ws, "live");
      await wrongCode(`${live}/stripe/disconnect`, {});
      assert.notEqual((await stripeStatus(env.services, { workspace: ws.slug, env: "live" })).connection, null);

      const added = await thief.postWithCode(env.dataDir, ws.ownerEmail, `${live}/webhooks`, { url: "https://vendor.example/hook" });
      assert.equal(added.statusCode, 303, "the owner, with the code, adds a live endpoint");
      const endpoint = /\/webhooks\/(ep_\w+)/.exec(String(added.headers.location))?.[1];
      assert.ok(endpoint);
      await wrongCode(`${live}/webhooks/${endpoint}/disable`, {});
      assert.doesNotMatch((await thief.get(`${live}/webhooks/${endpoint}`)).body, /badge-off">Disabled/);
      // Pointing the live endpoint at the thief's server, or deleting it, asks too.
      await wrongCode(`${live}/webhooks/${endpoint}/edit`, { url: "https://thief.example/hook" });
      await wrongCode(`${live}/webhooks/${endpoint}/delete`, {});
      const kept = await thief.get(`${live}/webhooks/${endpoint}`);
      assert.equal(kept.statusCode, 200, "not deleted");
      assert.match(kept.body, /https:\/\/vendor\.example\/hook/);
      assert.doesNotMatch(kept.body, /thief\.example/);

      // Removing the real owner: a second owner is needed for a removal to be possible at all.
      const colleague = `${unique("colleague")}@example.com`;
      assert.equal((await thief.postWithCode(env.dataDir, ws.ownerEmail, `${testEnv}/owners/invite`, { email: colleague })).statusCode, 303);
      await new TestBrowser(app).signIn(env.dataDir, colleague);
      await wrongCode(`${testEnv}/owners/remove`, { email: ws.ownerEmail });
      assert.equal((await listWorkspaceOwners(env.services, { workspace: ws.slug })).owners.length, 2);

      // Each mail names what it confirms, so the owner can tell it was not them.
      const mail = (await readMail(env.dataDir, ws.ownerEmail, (m) => m.includes(thiefAddress))) ?? "";
      assert.match(mail, new RegExp(`Subject: \\d{6} is your code to confirm: invite ${thiefAddress} to co-own Test workspace`));
      assert.ok(mail.includes("end your other sessions at http://127.0.0.1:8080/dashboard/sessions"), "where to end the thief's session");
    });

    test("a code confirms the one action and target it was mailed for, and nothing else", async () => {
      const { env, ws, thief, live, test: testEnv } = await setUp(dialect);
      const owner = thief;
      const mailTo = ws.ownerEmail;

      // A code mailed to invite one address does not invite another (the hidden field changed).
      const invited = `${unique("invited")}@example.com`;
      const attacker = `${unique("attacker")}@evil.example`;
      await owner.post(`${testEnv}/owners/invite`, { email: invited });
      const inviteCode = await readCode(env.dataDir, mailTo);
      const swapped = await owner.post(`${testEnv}/owners/invite`, { email: attacker, confirm: "1", code: inviteCode });
      assert.equal(swapped.statusCode, 400);
      assert.match(swapped.body, /mailed to confirm something else/);
      assert.deepEqual((await listWorkspaceOwners(env.services, { workspace: ws.slug })).invitations, []);

      // Nor another action: the same code does not create a live key.
      const key = await owner.post(`${live}/keys`, { name: "thief", confirm: "1", code: inviteCode });
      assert.equal(key.statusCode, 400);
      assert.doesNotMatch(key.body, /wk_live_/);

      // It still confirms what it was mailed for.
      assert.equal((await owner.post(`${testEnv}/owners/invite`, { email: invited, confirm: "1", code: inviteCode })).statusCode, 303);

      // Stripe: a code for one signing secret does not store another.
      await owner.post(`${testEnv}/stripe`, { webhook_secret: "whsec_theOwnersRealSecret0123" });
      const stripeCode = await readCode(env.dataDir, mailTo);
      const forged = await owner.post(`${testEnv}/stripe`, { webhook_secret: ATTACKER_SECRET, confirm: "1", code: stripeCode });
      assert.equal(forged.statusCode, 400);
      assert.equal((await stripeStatus(env.services, { workspace: ws.slug, env: "test" })).connection, null);
      // Paddle: nor one for the owner's destination secret key the thief's, nor an API key added beside it.
      const ownersPaddle = { webhook_secret: "pdl_ntfset_theOwnersRealSecret0123" };
      await owner.post(`${testEnv}/stripe/paddle`, ownersPaddle);
      const paddleCode = await readCode(env.dataDir, mailTo);
      for (const fields of [{ webhook_secret: "pdl_ntfset_attackersOwnSecret0123" }, { ...ownersPaddle, api_key: "pdl_sdbx_apikey_attackersOwnKey0123" }]) {
        const swappedPaddle = await owner.post(`${testEnv}/stripe/paddle`, { ...fields, confirm: "1", code: paddleCode });
        assert.equal(swappedPaddle.statusCode, 400);
      }
      assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: "test" })).connection, null);

      // A code to reveal an endpoint's secret does not rotate it (the "reveal" code made a live key).
      const added = await owner.post(`${testEnv}/webhooks`, { url: "https://vendor.example/a" });
      const endpoint = /\/webhooks\/(ep_\w+)/.exec(String(added.headers.location))?.[1];
      assert.ok(endpoint, added.body);
      await owner.post(`${testEnv}/webhooks/${endpoint}/secret`);
      const revealCode = await readCode(env.dataDir, mailTo);
      const rotated = await owner.post(`${testEnv}/webhooks/${endpoint}/secret/rotate`, { confirm: "1", code: revealCode });
      assert.equal(rotated.statusCode, 400, "a code to reveal does not rotate");
      assert.doesNotMatch(rotated.body, /whsec_/);

      // A code mailed to point a live endpoint at one URL does not point it at another.
      const liveAdded = await owner.postWithCode(env.dataDir, mailTo, `${live}/webhooks`, { url: "https://vendor.example/live" });
      const liveEndpoint = /\/webhooks\/(ep_\w+)/.exec(String(liveAdded.headers.location))?.[1];
      assert.ok(liveEndpoint);
      await owner.post(`${live}/webhooks/${liveEndpoint}/edit`, { url: "https://vendor.example/live-v2" });
      const editCode = await readCode(env.dataDir, mailTo);
      const redirected = await owner.post(`${live}/webhooks/${liveEndpoint}/edit`, { url: "https://thief.example/hook", confirm: "1", code: editCode });
      assert.equal(redirected.statusCode, 400);
      assert.match(redirected.body, /mailed to confirm something else/);
      const edited = await owner.post(`${live}/webhooks/${liveEndpoint}/edit`, { url: "https://vendor.example/live-v2", confirm: "1", code: editCode });
      assert.equal(edited.statusCode, 303);
      assert.match((await owner.get(String(edited.headers.location))).body, /https:\/\/vendor\.example\/live-v2/);
    });
  });
}
