// Sign-in that cannot be turned against an owner: strangers asking codes for an owner's
// address cannot lock the owner out, guesses at codes are capped per address and day,
// and the answer tells nobody whether the address is an owner's or the relay took the mail.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, test } from "node:test";
import { listUnsentMails } from "../../mail/mail-outbox.store.js";
import { authenticateOwnerSession, createOwnerLoginLink, requestConfirmationCode } from "../../owners/owner-sign-in.service.js";
import { dashboardApp, dashboardServices, readCode, readCodeMail, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";

const HOUR = 3_600_000;
const wrong = (code: string) => (code === "000000" ? "111111" : "000000");

/** An SMTP URL where nothing listens: every mail is refused. */
async function refusingRelay(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `smtp://127.0.0.1:${port}`;
}

for (const dialect of DIALECTS) {
  describe(`dashboard sign-in security (${dialect})`, () => {
    test("strangers asking codes for an owner's address from other sources do not lock the owner out, nor their confirmation codes", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const owner = new TestBrowser(app, "10.1.1.1");
      await owner.signIn(env.dataDir, ws.ownerEmail);
      // Ten sources, each until it is made to wait.
      for (let source = 0; source < 10; source++) {
        const stranger = new TestBrowser(app, `10.2.2.${source + 1}`);
        await stranger.get("/dashboard/sign-in");
        for (let i = 0; i < 5; i++) assert.equal((await stranger.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303);
        assert.equal((await stranger.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 429);
      }
      // Every stranger's code written out first: queued at the same instant, the sender may
      // write them in any order, and one written after the owner's would pass for the newest.
      await readMail(env.dataDir, ws.ownerEmail);
      // The owner, from their own network, signs in again at once…
      const again = new TestBrowser(app, "10.1.1.1");
      await again.signIn(env.dataDir, ws.ownerEmail);
      // …and their signed-in session still gets its confirmation codes.
      const session = await authenticateOwnerSession(env.services, owner.cookies.get("warden_session") as string);
      assert.ok(session);
      await requestConfirmationCode(env.services, session, { confirms: { action: "create a live API key", target: [] } });
      assert.match((await readCodeMail(env.dataDir, ws.ownerEmail)) ?? "", /code to confirm: create a live API key/);
    });

    test("confirmation codes have a quota per session: another session's use leaves it whole", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_CONFIRMATIONS_PER_SESSION_PER_HOUR: "2" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const sessions = [];
      for (const address of ["10.3.3.1", "10.3.3.2"]) {
        const browser = new TestBrowser(app, address);
        await browser.signIn(env.dataDir, ws.ownerEmail);
        sessions.push(await authenticateOwnerSession(env.services, browser.cookies.get("warden_session") as string));
      }
      const [first, second] = sessions;
      assert.ok(first && second);
      for (let i = 0; i < 2; i++) await requestConfirmationCode(env.services, first, { confirms: { action: "x", target: [] } });
      await assert.rejects(
        requestConfirmationCode(env.services, first, { confirms: { action: "x", target: [] } }),
        /confirmation codes per hour for this session/,
      );
      await requestConfirmationCode(env.services, second, { confirms: { action: "x", target: [] } });
    });

    test("at most 100 wrong codes a day for an address, from any browsers and sources; the operator's link and a sign-in start the count again", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const tries = 5;
      // 100 wrong codes: 5 to each of 20 codes, each asked for in a browser of its own.
      for (let b = 0; b < 20; b++) {
        const guesser = new TestBrowser(app, `10.4.${b}.1`);
        await guesser.get("/dashboard/sign-in");
        assert.equal((await guesser.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303);
        const code = await readCode(env.dataDir, ws.ownerEmail);
        for (let i = 0; i < tries; i++) assert.equal((await guesser.post("/dashboard/sign-in/code", { code: wrong(code) })).statusCode, 400);
      }
      // Past the ceiling even the right code is refused, in any browser.
      const owner = new TestBrowser(app, "10.4.250.1");
      await owner.get("/dashboard/sign-in");
      assert.equal((await owner.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303);
      const refused = await owner.post("/dashboard/sign-in/code", { code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(refused.statusCode, 429);
      assert.match(refused.body, /Too many wrong sign-in codes for this address in a day \(100\)/);
      assert.equal(owner.cookies.has("warden_session"), false);
      // An unknown address is answered the same way once guessed at as much (nothing tells them apart).
      // The operator's link lets the owner in and clears the count.
      const { token } = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
      const linked = new TestBrowser(app);
      await linked.get(`/dashboard/sign-in/link/${token}`);
      assert.equal((await linked.post(`/dashboard/sign-in/link/${token}`)).statusCode, 303);
      await new TestBrowser(app).signIn(env.dataDir, ws.ownerEmail);
    });

    test("the ceiling of wrong codes ends 24 hours after the first", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      for (let b = 0; b < 20; b++) {
        const guesser = new TestBrowser(app);
        await guesser.get("/dashboard/sign-in");
        await guesser.post("/dashboard/sign-in", { email: ws.ownerEmail });
        const code = await readCode(env.dataDir, ws.ownerEmail);
        for (let i = 0; i < 5; i++) await guesser.post("/dashboard/sign-in/code", { code: wrong(code) });
      }
      env.clock.advance(24 * HOUR);
      await new TestBrowser(app).signIn(env.dataDir, ws.ownerEmail);
    });

    test("an owner's address and an unknown one get the same answer, and a relay that refuses the mail changes nothing in it", async () => {
      const env = await dashboardServices(dialect, { SMTP_URL: await refusingRelay() });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const answers = [];
      for (const email of [ws.ownerEmail, `nobody-${ws.slug}@example.com`]) {
        const browser = new TestBrowser(app);
        await browser.get("/dashboard/sign-in");
        const asked = await browser.post("/dashboard/sign-in", { email });
        const { date: _date, "set-cookie": _cookie, "request-id": _id, ...headers } = asked.headers;
        answers.push({ status: asked.statusCode, headers, body: asked.body });
        const code = await browser.get("/dashboard/sign-in/code");
        answers.push({ status: code.statusCode, body: code.body.replaceAll(email, "ADDRESS").replace(/name="_csrf" value="\w+"/g, "") });
      }
      assert.equal(answers[0]?.status, 303);
      assert.deepEqual(answers.slice(0, 2), answers.slice(2));
      // The owner's code was not lost: it waits in the outbox to be retried.
      await readMail(env.dataDir, ws.ownerEmail);
      const [unsent] = await listUnsentMails(env.services.db, ws.ownerEmail);
      assert.equal(unsent?.kind, "owner-sign-in-code");
      assert.equal(unsent?.attempts, 1);
      assert.match(unsent?.lastError ?? "", /ECONNREFUSED/);
    });
  });
}
