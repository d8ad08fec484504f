// A page ticket never switches or signs in a browser silently (login CSRF): opening a
// ticket's link asks "Continue as …?" unless the browser is signed in as the ticket's
// person already, and only the question's own form, posted from the page with its
// token, spends the ticket.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { csrfTokenFor } from "../dashboard/shared/security.js";
import { answerTicketQuestion, pagesOf, signedInDevice, signInOnPages, ticketFor } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";

const sessionCookie = (slug: string) => `warden_customer_${slug}_test`;
const TICKET_COOKIE = "warden_customer_ticket";

/** The hidden `return` of the question's form. */
const returnOf = (body: string) => /<input type="hidden" name="return" value="([^"]*)">/.exec(body)?.[1] ?? "";
/** The form token of the question's form (a signed-in page's shell has the session's too, for Sign out). */
const questionToken = (body: string) => /action="[^"]+\/ticket" class="stack">\n<input type="hidden" name="_csrf" value="([0-9a-f]+)"/.exec(body)?.[1] ?? "";

for (const dialect of DIALECTS) {
  describe(`hosted pages: a page ticket asks before it signs in (${dialect})`, () => {
    test("an attacker's ticket does not switch a signed-in browser: the page asks, a cross-site or tokenless answer is refused, and No keeps the person", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const victimEmail = `victim-${ws.slug}@example.com`;
      const attackerEmail = `attacker-${ws.slug}@example.com`;
      const victim = new TestBrowser(app);
      await signInOnPages(victim, env.dataDir, base, victimEmail);
      const victimSession = victim.cookies.get(sessionCookie(ws.slug));
      // The attacker mints a ticket with their own device and sends the link.
      const ticket = (await ticketFor(app, ws.tool, await signedInDevice(app, env.dataDir, ws, attackerEmail))).json().ticket as string;

      const opened = await victim.get(`${base}/plans?ticket=${ticket}`);
      assert.equal(opened.statusCode, 303);
      assert.equal(opened.headers.location, `${base}/plans`, "the ticket leaves the address bar");
      assert.equal(victim.cookies.get(sessionCookie(ws.slug)), victimSession, "the session is not replaced by opening the link");
      const cookie = [opened.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith(`${TICKET_COOKIE}=`)) ?? "";
      assert.match(cookie, new RegExp(`^${TICKET_COOKIE}=wph_[0-9A-Za-z]{43}; Path=${base}; HttpOnly; SameSite=Lax; Max-Age=600$`));
      assert.equal(cookie.includes(ticket), false, "the cookie holds a ticket of its own, never the link's");

      const asked = await victim.get(`${base}/plans`);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, new RegExp(`<h1>Continue as ${attackerEmail}\\?</h1>`));
      assert.match(asked.body, new RegExp(`You are signed in as <strong>${victimEmail}</strong> there now`));
      assert.match(asked.body, new RegExp(`No, stay as ${victimEmail}`));
      assert.doesNotMatch(asked.body, /name="plan"/, "no plan can be bought before the question is answered");
      const back = returnOf(asked.body);
      assert.equal(back, `${base}/plans`);

      // A page of another site cannot answer for the person: the browser says where the post comes from…
      const crossSite: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "", origin: "https://attacker.example" }];
      for (const headers of crossSite) {
        const forged = await victim.post(`${base}/ticket`, { answer: "continue", return: back }, headers);
        assert.equal(forged.statusCode, 403, JSON.stringify(headers));
      }
      // …and the form's token is of the cookie's ticket, which the attacker never saw: one made from the link's ticket is refused.
      const guessed = await victim.post(`${base}/ticket`, { _csrf: csrfTokenFor(ticket), answer: "continue", return: back });
      assert.equal(guessed.statusCode, 403);
      assert.equal(victim.cookies.get(sessionCookie(ws.slug)), victimSession);

      // The person says no: the ticket is spent, the question gone, the person still themselves.
      const stayed = await answerTicketQuestion(victim, (await victim.get(`${base}/plans`)).body, "stay");
      assert.equal(stayed.headers.location, `${base}/plans`);
      assert.equal(victim.cookies.has(TICKET_COOKIE), false);
      assert.equal(victim.cookies.get(sessionCookie(ws.slug)), victimSession);
      const plans = await victim.get(`${base}/plans`);
      assert.doesNotMatch(plans.body, /Continue as/);
      assert.match(plans.body, new RegExp(`<span class="who">${victimEmail}</span>`));
      // Nor does the link work anywhere after being opened once.
      const later = new TestBrowser(app);
      await later.get(`${base}/plans?ticket=${ticket}`);
      assert.equal(later.cookies.has(TICKET_COOKIE), false, "spent");

      // The ticket a browser holds for its question (10 minutes, its own kind) is no link's
      // ticket: the attacker, reading it from their own browser's cookie, cannot send it as one.
      const attacker = new TestBrowser(app);
      const own = (await ticketFor(app, ws.tool, await signedInDevice(app, env.dataDir, ws, attackerEmail))).json().ticket as string;
      await attacker.get(`${base}/plans?ticket=${own}`);
      const held = attacker.cookies.get(TICKET_COOKIE) ?? "";
      assert.match(held, /^wph_/);
      const relayed = new TestBrowser(app);
      await relayed.get(`${base}/plans?ticket=${held}`);
      assert.equal(relayed.cookies.has(TICKET_COOKIE), false, "a held ticket opens no question");
      assert.doesNotMatch((await relayed.get(`${base}/plans`)).body, /Continue as/);
    });

    test("a browser signed in to nobody is asked too; Continue signs it in, once, and the question lasts 10 minutes", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const email = `ada-${ws.slug}@example.com`;
      const device = await signedInDevice(app, env.dataDir, ws, email);

      const browser = new TestBrowser(app);
      const opened = await browser.get(`${base}/manage?ticket=${(await ticketFor(app, ws.tool, device)).json().ticket}`);
      assert.equal(opened.headers.location, `${base}/manage`);
      assert.equal(browser.cookies.has(sessionCookie(ws.slug)), false, "not signed in by opening the link");
      const held = browser.cookies.get(TICKET_COOKIE) as string;
      const asked = await browser.get(`${base}/manage`);
      assert.equal(asked.statusCode, 200, "the question, not the sign-in page's redirect");
      assert.match(asked.body, new RegExp(`<h1>Continue as ${email}\\?</h1>`));
      assert.match(asked.body, /No, stay signed out/);
      const form = questionToken(asked.body);

      const yes = await answerTicketQuestion(browser, asked.body, "continue");
      assert.equal(yes.headers.location, `${base}/manage`);
      assert.equal(browser.cookies.has(TICKET_COOKIE), false);
      const manage = await browser.get(`${base}/manage`);
      assert.equal(manage.statusCode, 200);
      assert.match(manage.body, new RegExp(`<span class="who">${email}</span>`));
      assert.doesNotMatch(manage.body, /Continue as/);
      // The same answer again (its cookie and token replayed) opens nothing more.
      const sessions = () =>
        env.services.db
          .selectFrom("customer_sessions")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("workspace_id", "=", ws.workspaceId)
          .executeTakeFirstOrThrow();
      const before = Number((await sessions()).n);
      const replayed = await app.inject({
        method: "POST",
        url: `${base}/ticket`,
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", cookie: `${TICKET_COOKIE}=${held}` },
        payload: new URLSearchParams({ _csrf: form, answer: "continue", return: `${base}/manage` }).toString(),
      });
      assert.equal(replayed.statusCode, 303);
      assert.equal(Number((await sessions()).n), before, "a spent ticket opens no session");

      // A question left unanswered for 10 minutes is gone.
      const slow = new TestBrowser(app);
      await slow.get(`${base}/plans?ticket=${(await ticketFor(app, ws.tool, device)).json().ticket}`);
      assert.match((await slow.get(`${base}/plans`)).body, /Continue as/);
      env.clock.advance(600_000);
      const expired = await slow.get(`${base}/plans`);
      assert.doesNotMatch(expired.body, /Continue as/);
      assert.equal(slow.cookies.has(TICKET_COOKIE), false);
    });

    test("a browser signed in as the ticket's person already opens the page with no question, keeping its session", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const email = `same-${ws.slug}@example.com`;
      const browser = new TestBrowser(app);
      await signInOnPages(browser, env.dataDir, base, email);
      const session = browser.cookies.get(sessionCookie(ws.slug));
      const ticket = (await ticketFor(app, ws.tool, await signedInDevice(app, env.dataDir, ws, email))).json().ticket as string;

      const opened = await browser.get(`${base}/plans?ticket=${ticket}`);
      assert.equal(opened.headers.location, `${base}/plans`);
      assert.equal(browser.cookies.has(TICKET_COOKIE), false);
      const plans = await browser.get(`${base}/plans`);
      assert.doesNotMatch(plans.body, /Continue as/);
      assert.match(plans.body, new RegExp(`<span class="who">${email}</span>`));
      assert.equal(browser.cookies.get(sessionCookie(ws.slug)), session);
      const reused = new TestBrowser(app);
      await reused.get(`${base}/plans?ticket=${ticket}`);
      assert.equal(reused.cookies.has(TICKET_COOKIE), false, "spent");
    });
  });
}
