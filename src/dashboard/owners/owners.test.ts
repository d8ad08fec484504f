import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, readCode, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../../test-support/harness.js";
import { setOwnerSuspension } from "../../workspaces/workspace.service.js";

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect, { WARDEN_PUBLIC_URL: "https://warden.example.com" });
  const app = await dashboardApp(env);
  const ws = await seedWorkspace(env.services);
  const owner = new TestBrowser(app);
  await owner.signIn(env.dataDir, ws.ownerEmail);
  const owners = `/dashboard/w/${ws.slug}/test/owners`;
  await owner.get(owners);
  return { env, app, ws, owner, owners };
}

for (const dialect of DIALECTS) {
  describe(`dashboard owners (${dialect})`, () => {
    test("a co-owner is invited by mail, signs in with a code and has the workspace; removed, their next request is refused", async () => {
      const { env, app, ws, owner, owners } = await setUp(dialect);
      assert.match((await owner.get(owners)).body, /The only owner/, "the last owner offers no removal");
      const colleague = `${unique("colleague")}@example.com`;
      // A Host the request's sender wrote does not make the mail's link.
      const evil = { host: "evil.example" };
      assert.equal((await owner.post(`${owners}/invite`, { email: colleague }, evil)).statusCode, 200);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      const invited = await owner.post(`${owners}/invite`, { email: colleague, confirm: "1", code }, evil);
      assert.equal(invited.statusCode, 303);
      const listed = await owner.get(invited.headers.location as string);
      assert.match(listed.body, /Invitation sent to <strong>/);
      assert.ok(listed.body.includes(`<td data-label="Address">${colleague}</td>`));
      const mail = (await readMail(env.dataDir, colleague)) ?? "";
      assert.match(mail, /Subject: You are invited to co-own Test workspace on Warden/);
      assert.ok(mail.includes("https://warden.example.com/dashboard/invitations"));
      assert.doesNotMatch(mail, /evil\.example/);
      assert.ok(mail.includes(ws.ownerEmail), "says who invited");

      const browser = new TestBrowser(app);
      const landed = await browser.signIn(env.dataDir, colleague);
      assert.equal(landed.headers.location, "/dashboard");
      assert.equal((await browser.get("/dashboard")).headers.location, `/dashboard/w/${ws.slug}/test`);
      const inside = await browser.get(`/dashboard/w/${ws.slug}/test/owners`);
      assert.equal(inside.statusCode, 200);
      assert.ok(inside.body.includes(colleague) && inside.body.includes(ws.ownerEmail));
      assert.match(inside.body, /No open invitations/, "accepted");

      // The first owner removes the co-owner: the co-owner's very next request is refused.
      assert.match((await owner.get(`${owners}/remove?email=${encodeURIComponent(colleague)}`)).body, /Remove .+\?/);
      const removed = await owner.postWithCode(env.dataDir, ws.ownerEmail, `${owners}/remove`, { email: colleague });
      assert.equal(removed.statusCode, 303);
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/test/keys`)).statusCode, 404);
      assert.equal((await browser.post(`/dashboard/w/${ws.slug}/test/keys`, { name: "after removal" })).statusCode, 404);

      // Never the last: the same refusal the CLI gives.
      const last = await owner.post(`${owners}/remove`, { email: ws.ownerEmail });
      assert.equal(last.statusCode, 400);
      assert.ok(last.body.includes(`${ws.ownerEmail} is the workspace&#39;s only owner: invite another owner before removing this one.`));

      const audit = (await owner.get("/dashboard/audit")).body;
      for (const action of ["Invited a co-owner", "Joined as a co-owner", "Removed an owner"]) assert.match(audit, new RegExp(action));
    });

    test("an invitation expires; a withdrawn one gives nothing; an owner already signed in accepts from the link", async () => {
      const { env, app, ws, owner, owners } = await setUp(dialect);
      const withdrawn = `${unique("withdrawn")}@example.com`;
      await owner.postWithCode(env.dataDir, ws.ownerEmail, `${owners}/invite`, { email: withdrawn });
      const gone = await owner.post(`${owners}/withdraw`, { email: withdrawn });
      assert.equal(gone.statusCode, 303);
      const withdrawnBrowser = new TestBrowser(app);
      await withdrawnBrowser.signIn(env.dataDir, withdrawn);
      assert.equal((await withdrawnBrowser.get(`/dashboard/w/${ws.slug}/test`)).statusCode, 404);

      // An owner of another workspace, signed in already, follows the mail's link and accepts.
      const other = await seedWorkspace(env.services);
      const signedIn = new TestBrowser(app);
      await signedIn.signIn(env.dataDir, other.ownerEmail);
      await owner.get(owners);
      await owner.postWithCode(env.dataDir, ws.ownerEmail, `${owners}/invite`, { email: other.ownerEmail });
      const offer = await signedIn.get("/dashboard/invitations");
      assert.match(offer.body, /You are invited/);
      assert.match(offer.body, /<strong>Test workspace<\/strong>/);
      const accepted = await signedIn.post("/dashboard/invitations");
      assert.equal(accepted.headers.location, `/dashboard/w/${ws.slug}/test`);
      assert.equal((await signedIn.get(`/dashboard/w/${ws.slug}/test/owners`)).statusCode, 200);
      assert.match((await signedIn.get("/dashboard/invitations")).body, /No open invitations/);

      // Seven days later an invitation no longer works (and the inviting session has ended too: signed in again).
      const late = `${unique("late")}@example.com`;
      await owner.postWithCode(env.dataDir, ws.ownerEmail, `${owners}/invite`, { email: late });
      env.clock.advance(7 * 24 * 3_600_000);
      const lateBrowser = new TestBrowser(app);
      await lateBrowser.signIn(env.dataDir, late);
      assert.match((await lateBrowser.get("/dashboard")).body, /You own no workspace yet/);
      assert.equal((await lateBrowser.get(`/dashboard/w/${ws.slug}/test`)).statusCode, 404);
      await owner.signIn(env.dataDir, ws.ownerEmail);
      assert.doesNotMatch((await owner.get(owners)).body, new RegExp(late.replace(/[.]/g, "\\.")), "an expired invitation is not listed");
    });

    test("refuses an address that is not one, or an owner already; a signed-out visit to the mail's link asks to sign in", async () => {
      const { env, app, ws, owner, owners } = await setUp(dialect);
      const bad = await owner.post(`${owners}/invite`, { email: "not an address" });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /email must be an email address\./);
      const already = await owner.post(`${owners}/invite`, { email: ws.ownerEmail.toUpperCase() });
      assert.equal(already.statusCode, 400);
      assert.ok(already.body.includes(`${ws.ownerEmail} is an owner of this workspace already.`));
      // An owner suspended elsewhere is invited as any address: nothing tells this owner of the suspension.
      const suspended = await seedWorkspace(env.services);
      await setOwnerSuspension(env.services.db, env.services.clock, { email: suspended.ownerEmail, suspended: true });
      const quiet = await owner.postWithCode(env.dataDir, ws.ownerEmail, `${owners}/invite`, { email: suspended.ownerEmail });
      assert.equal(quiet.statusCode, 303);
      assert.doesNotMatch((await owner.get(quiet.headers.location as string)).body, /suspend/i);
      assert.equal(await readMail(env.dataDir, suspended.ownerEmail, (m) => /invited/.test(m)), null, "not mailed");
      const stranger = await new TestBrowser(app).get("/dashboard/invitations");
      assert.equal(stranger.statusCode, 303);
      assert.equal(stranger.headers.location, "/dashboard/sign-in");
    });
  });
}
