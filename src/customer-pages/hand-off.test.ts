// The hand-off from the hosted sign-in page to an extension (authorisation code + PKCE,
// then the client API's exchange), page tickets, and that no token is ever in a URL the
// server sees or a line it logs.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../app.js";
import { answerTicketQuestion, continueWithTicket, handOffQuery, pagesOf, pkcePair, signInOnPages, ticketFor } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, type Workspace } from "../test-support/harness.js";
import { checkAgainstOpenApi } from "../test-support/openapi-check.js";
import { createTool } from "../workspaces/workspace.service.js";

const DEVICE = { name: "Work laptop", platform: "chrome-mac" };
const REDIRECT = "https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/cb";

/** The code and state of a redirect to the extension, read from its fragment. */
function fragmentOf(location: string): { code: string; state: string } {
  const [target, fragment = ""] = location.split("#");
  assert.equal(target, REDIRECT);
  const fields = new URLSearchParams(fragment);
  return { code: fields.get("code") ?? "", state: fields.get("state") ?? "" };
}

async function exchange(app: FastifyInstance, tool: string, body: Record<string, unknown>) {
  const url = `/api/client/v1/tools/${tool}/sign-in/exchange`;
  const answer = await app.inject({ method: "POST", url, payload: body, headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" } });
  await checkAgainstOpenApi(app, "POST", url, answer);
  return answer;
}

/** Signs `email` in on the page as an extension asks, and answers the code sent to the extension with its verifier. */
async function handOff(app: FastifyInstance, dataDir: string, ws: Workspace, email: string, env: "test" | "live" = "test") {
  const { verifier, challenge } = pkcePair();
  const browser = new TestBrowser(app);
  const state = "state-1234";
  const landed = await signInOnPages(browser, dataDir, pagesOf(ws, env), email, handOffQuery(challenge, state, REDIRECT));
  assert.equal(landed.statusCode, 303);
  const sent = fragmentOf(landed.headers.location as string);
  assert.equal(sent.state, state);
  assert.match(sent.code, /^wac_[0-9A-Za-z]{43}$/);
  return { browser, verifier, challenge, code: sent.code };
}

for (const dialect of DIALECTS) {
  describe(`hosted pages: hand-off to the extension (${dialect})`, () => {
    test("the page sends the signed-in person to the extension's redirect with a code; code and verifier give a device session", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const email = `ada-${ws.slug}@example.com`;
      const { verifier, challenge } = pkcePair();
      const browser = new TestBrowser(app);
      const page = await browser.get(`${pagesOf(ws)}/sign-in${handOffQuery(challenge, "s1", REDIRECT)}`);
      assert.match(
        page.body,
        /The <strong>Tab Master<\/strong> extension \(id <code class="extension-id">abcdefghijklmnopabcdefghijklmnop<\/code>\) asked to sign you in/,
      );
      assert.match(page.body, /is sold by Test workspace/, "the workspace is named before anything is asked");
      assert.match(page.headers["content-security-policy"] as string, /form-action 'self' https:\/\/abcdefghijklmnopabcdefghijklmnop\.chromiumapp\.org;/);

      const landed = await signInOnPages(browser, env.dataDir, pagesOf(ws), email, handOffQuery(challenge, "s1", REDIRECT));
      const { code, state } = fragmentOf(landed.headers.location as string);
      assert.equal(state, "s1");
      assert.ok(browser.cookies.has(`warden_customer_${ws.slug}_test`), "the page is signed in too");

      const exchanged = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE });
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      assert.equal(exchanged.headers["access-control-allow-origin"], "chrome-extension://abcdefghijklmnopabcdefghijklmnop");
      const session = exchanged.json();
      assert.match(session.token, /^wdt_[0-9A-Za-z]{43}$/);
      assert.equal(session.email, email);
      assert.equal(session.device.name, "Work laptop");
      const access = await app.inject({ url: `/api/client/v1/tools/${ws.tool}/access`, headers: { authorization: `Bearer ${session.token}` } });
      assert.equal(access.statusCode, 200);
      assert.equal(access.json().entitled, false);
      const listed = await app.inject({ url: `/api/v1/tools/${ws.tool}/customers`, headers: { authorization: `Bearer ${ws.testKey}` } });
      const item = listed.json().data.find((c: { email: string }) => c.email === email);
      assert.equal(item.account, true);
      assert.equal(item.devices, 1);

      // Once only.
      const again = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE });
      assert.equal(again.statusCode, 400);
      assert.equal(again.json().error.param, "code");
    });

    test("a wrong verifier, an expired code, another tool or environment: refused with the field named, and the code spent", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await createTool(env.services.db, env.clock, { workspace: ws.slug, id: "notepad", name: "Notepad" });
      const email = `eve-${ws.slug}@example.com`;

      const wrong = await handOff(app, env.dataDir, ws, email);
      const refused = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code: wrong.code, code_verifier: pkcePair().verifier, device: DEVICE });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().error.type, "invalid_request_error");
      assert.equal(refused.json().error.param, "code_verifier");
      const late = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code: wrong.code, code_verifier: wrong.verifier, device: DEVICE });
      assert.equal(late.json().error.param, "code", "a wrong verifier spent the code: the right one comes too late");

      const expired = await handOff(app, env.dataDir, ws, email);
      env.clock.advance(60_000);
      const tooLate = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code: expired.code, code_verifier: expired.verifier, device: DEVICE });
      assert.equal(tooLate.statusCode, 400);
      assert.equal(tooLate.json().error.param, "code");

      const forTool = await handOff(app, env.dataDir, ws, email);
      const otherTool = await exchange(app, "notepad", {
        workspace: ws.slug,
        env: "test",
        code: forTool.code,
        code_verifier: forTool.verifier,
        device: DEVICE,
      });
      assert.equal(otherTool.statusCode, 400);
      assert.equal(otherTool.json().error.param, "code");
      assert.match(otherTool.json().error.message, /another tool, workspace or environment/);

      const forTest = await handOff(app, env.dataDir, ws, email);
      const live = await exchange(app, ws.tool, { workspace: ws.slug, env: "live", code: forTest.code, code_verifier: forTest.verifier, device: DEVICE });
      assert.equal(live.json().error.param, "code");

      const other = await seedWorkspace(env.services);
      const forWs = await handOff(app, env.dataDir, ws, email);
      const elsewhere = await exchange(app, other.tool, {
        workspace: other.slug,
        env: "test",
        code: forWs.code,
        code_verifier: forWs.verifier,
        device: DEVICE,
      });
      assert.equal(elsewhere.json().error.param, "code");

      const malformed = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code: "wac_x", code_verifier: "short", device: DEVICE });
      assert.equal(malformed.statusCode, 400);
      assert.equal(malformed.json().error.param, "code_verifier");

      const devices = await env.services.db.selectFrom("devices").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(devices.length, 0, "no refused exchange made a device");
    });

    test("only an extension's redirect, with state and an S256 challenge, is followed; anything else is a 400 page that redirects nowhere", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const { challenge } = pkcePair();
      const query = (fields: Record<string, string>) =>
        `?${new URLSearchParams({ redirect_uri: REDIRECT, state: "s", code_challenge: challenge, code_challenge_method: "S256", ...fields })}`;
      for (const bad of [
        query({ redirect_uri: "https://evil.example/cb" }),
        query({ redirect_uri: "https://evil.example/x.chromiumapp.org/" }),
        query({ redirect_uri: "https://abcdefghijklmnopabcdefghijklmnoz.chromiumapp.org/cb" }),
        query({ redirect_uri: `${REDIRECT}#x` }),
        query({ redirect_uri: "javascript:alert(1)//abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/" }),
        query({ state: "" }),
        query({ code_challenge_method: "plain" }),
        query({ code_challenge: "short" }),
      ]) {
        const answer = await app.inject({ url: `${pagesOf(ws)}/sign-in${bad}` });
        assert.equal(answer.statusCode, 400, bad);
        assert.equal(answer.headers.location, undefined);
        assert.match(answer.body, /<h1>Sign-in link not valid<\/h1>/);
      }
      for (const good of [
        "https://0123456789abcdef0123456789abcdef01234567.extensions.allizom.org/",
        "chrome-extension://abcdefghijklmnopabcdefghijklmnop/signed-in.html",
        "moz-extension://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/signed-in.html",
      ]) {
        assert.equal((await app.inject({ url: `${pagesOf(ws)}/sign-in${query({ redirect_uri: good })}` })).statusCode, 200, good);
      }
    });

    test("signed in already, the page asks before handing the session to the extension, naming it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const email = `cont-${ws.slug}@example.com`;
      const browser = new TestBrowser(app);
      await signInOnPages(browser, env.dataDir, pagesOf(ws), email);
      const { verifier, challenge } = pkcePair();
      const page = await browser.get(`${pagesOf(ws)}/sign-in${handOffQuery(challenge, "s2", REDIRECT)}`);
      assert.equal(page.statusCode, 200, "no silent redirect to whichever extension asks");
      assert.match(page.body, new RegExp(`Continue as ${email}`));
      assert.match(page.body, /id <code class="extension-id">abcdefghijklmnopabcdefghijklmnop<\/code>/);
      const fields = { redirect_uri: REDIRECT, state: "s2", code_challenge: challenge, code_challenge_method: "S256" };
      const forged = await browser.post(`${pagesOf(ws)}/sign-in/continue`, fields, { "sec-fetch-site": "cross-site" });
      assert.equal(forged.statusCode, 403);
      const continued = await browser.post(`${pagesOf(ws)}/sign-in/continue`, fields);
      assert.equal(continued.statusCode, 303);
      const { code } = fragmentOf(continued.headers.location as string);
      const exchanged = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE });
      assert.equal(exchanged.json().email, email);
    });
  });

  describe(`hosted pages: page tickets (${dialect})`, () => {
    test("a device's ticket opens a page signed in once the person continues, once, within 60 s, on its own workspace environment and tool only", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const email = `tix-${ws.slug}@example.com`;
      const { verifier, code } = await handOff(app, env.dataDir, ws, email);
      const device = (await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE })).json().token as string;

      const issued = await ticketFor(app, ws.tool, device);
      assert.equal(issued.statusCode, 200, issued.body);
      const { ticket, expires_at } = issued.json();
      assert.match(ticket, /^wpt_[0-9A-Za-z]{43}$/);
      assert.equal(expires_at, "2026-11-21T12:01:00.000Z", "60 s from its issue");

      const browser = new TestBrowser(app);
      const opened = await browser.get(`${pagesOf(ws)}/sign-in?return=x&ticket=${ticket}`);
      assert.equal(opened.statusCode, 303);
      assert.equal(opened.headers.location, `${pagesOf(ws)}/sign-in?return=x`, "the same page, without the ticket");
      assert.equal(browser.cookies.has(`warden_customer_${ws.slug}_test`), false, "not before the person continues");
      const question = await browser.get(opened.headers.location);
      await answerTicketQuestion(browser, question.body, "continue");
      assert.match(question.body, new RegExp(`<h1>Continue as ${email}\\?</h1>`));
      assert.match(question.body, new RegExp(`name="return" value="${pagesOf(ws)}/sign-in\\?return=x"`), "then the page asked for");
      assert.ok(browser.cookies.has(`warden_customer_${ws.slug}_test`));
      const signedIn = await browser.get(`${pagesOf(ws)}/sign-in?other=1`);
      assert.match(signedIn.body, new RegExp(`<span class="who">${email}</span>`));

      const reused = new TestBrowser(app);
      await reused.get(`${pagesOf(ws)}/sign-in?ticket=${ticket}`);
      assert.equal(reused.cookies.size, 0, "single use: no question, no session");

      const late = (await ticketFor(app, ws.tool, device)).json().ticket as string;
      env.clock.advance(60_000);
      const tooLate = new TestBrowser(app);
      await tooLate.get(`${pagesOf(ws)}/sign-in?ticket=${late}`);
      assert.equal(tooLate.cookies.size, 0, "60 s");

      const other = await seedWorkspace(env.services);
      for (const base of [pagesOf(other), pagesOf(ws, "live")]) {
        const wrongPage = (await ticketFor(app, ws.tool, device)).json().ticket as string;
        const elsewhere = new TestBrowser(app);
        const answer = await elsewhere.get(`${base}/sign-in?ticket=${wrongPage}`);
        assert.equal(answer.statusCode, 303);
        assert.equal(elsewhere.cookies.size, 0, `no session on ${base}`);
        const spent = new TestBrowser(app);
        await spent.get(`${pagesOf(ws)}/sign-in?ticket=${wrongPage}`);
        assert.equal(spent.cookies.size, 0, "spent by the refused try");
      }

      const forOtherTool = await ticketFor(app, "notepad", device);
      assert.equal(forOtherTool.statusCode, 404);
      const noToken = await app.inject({ method: "POST", url: `/api/client/v1/tools/${ws.tool}/page-tickets` });
      assert.equal(noToken.statusCode, 401);
    });

    test("30 tickets a minute per device: the 31st is a 429 with Retry-After to the minute's end, another device is not affected, the next minute is", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const deviceOf = async (email: string) => {
        const { verifier, code } = await handOff(app, env.dataDir, ws, email);
        return (await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE })).json().token as string;
      };
      const device = await deviceOf(`cap-${ws.slug}@example.com`);
      const other = await deviceOf(`other-${ws.slug}@example.com`);
      // 20 s into a minute, so the refusal's wait is the 40 s left of it.
      env.clock.set(Math.floor(env.clock.now() / 60_000) * 60_000 + 60_000 + 20_000);
      const tickets = new Set<string>();
      for (let i = 0; i < 30; i++) {
        const issued = await ticketFor(app, ws.tool, device);
        assert.equal(issued.statusCode, 200, `ticket ${i + 1}: ${issued.body}`);
        tickets.add(issued.json().ticket);
      }
      assert.equal(tickets.size, 30);

      const refused = await ticketFor(app, ws.tool, device);
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers["retry-after"], "40");
      assert.equal(refused.json().error.type, "rate_limit_error");
      assert.match(refused.json().error.message, /page tickets per minute for this device \(30\)/);
      const written = await env.services.db
        .selectFrom("customer_exchange_tokens")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("kind", "=", "page_ticket")
        .where("workspace_id", "=", ws.workspaceId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(written.n), 30, "a refused ticket writes no row");

      assert.equal((await ticketFor(app, ws.tool, other)).statusCode, 200, "another device has its own minute");
      env.clock.advance(40_000);
      assert.equal((await ticketFor(app, ws.tool, device)).statusCode, 200, "the next minute");
    });

    test("a key-activated device's ticket opens a session for its licence, without the buyer's address", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const buyer = `buyer-${ws.slug}@example.com`;
      const { verifier, code } = await handOff(app, env.dataDir, ws, buyer);
      const buyerDevice = (await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE })).json()
        .token as string;
      const granted = await app.inject({
        method: "POST",
        url: "/api/v1/tools/tabmaster/grants",
        headers: { authorization: `Bearer ${ws.testKey}` },
        payload: { email: buyer, days: 30 },
      });
      assert.equal(granted.statusCode, 201);
      const { importNdjson } = await import("../import/import.service.js");
      await importNdjson(env.services.db, env.clock, {
        workspace: ws.slug,
        env: "test",
        text: JSON.stringify({ type: "licence", email: buyer, tool: ws.tool, purchased_at: new Date(env.clock.now() - 1000).toISOString() }),
      });
      const purchases = await app.inject({ url: "/api/client/v1/purchases", headers: { authorization: `Bearer ${buyerDevice}` } });
      const key = purchases.json().data.find((p: { key: string | null }) => p.key)?.key as string;
      const activated = await app.inject({
        method: "POST",
        url: `/api/client/v1/tools/${ws.tool}/activate`,
        payload: { workspace: ws.slug, key, device: DEVICE },
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const keyDevice = activated.json().token as string;

      const ticket = (await ticketFor(app, ws.tool, keyDevice)).json().ticket as string;
      const browser = new TestBrowser(app);
      const { question } = await continueWithTicket(browser, `${pagesOf(ws)}/sign-in?ticket=${ticket}`);
      assert.match(question.body, /<h1>Continue with the licence key\?<\/h1>/);
      assert.match(question.body, /No, stay signed out/);
      assert.doesNotMatch(question.body, new RegExp(buyer), "the question names no address either");
      const page = await browser.get(`${pagesOf(ws)}/sign-in?other=1`);
      assert.match(page.body, /Signed in with a licence key/);
      assert.doesNotMatch(page.body, new RegExp(buyer));
      const row = await env.services.db
        .selectFrom("customer_sessions")
        .select("licence_id")
        .where("workspace_id", "=", ws.workspaceId)
        .where("licence_id", "is not", null)
        .executeTakeFirst();
      assert.ok(row?.licence_id?.startsWith("lic_"));
    });
  });

  describe(`hosted pages: no token in a URL or a log line (${dialect})`, () => {
    test("the whole journey's log lines hold no session token, code, ticket, device token or address", async () => {
      const env = await dashboardServices(dialect);
      const lines: string[] = [];
      const app = await buildApp(env.services, { logger: { level: "info", stream: { write: (line: string) => lines.push(line) } } });
      await app.ready();
      try {
        const ws = await seedWorkspace(env.services);
        const email = `logs-${ws.slug}@example.com`;
        const { browser, verifier, code } = await handOff(app, env.dataDir, ws, email);
        const exchanged = await exchange(app, ws.tool, { workspace: ws.slug, env: "test", code, code_verifier: verifier, device: DEVICE });
        const device = exchanged.json().token as string;
        const ticket = (await ticketFor(app, ws.tool, device)).json().ticket as string;
        const ticketed = new TestBrowser(app);
        const opened = await ticketed.get(`${pagesOf(ws)}/sign-in?ticket=${ticket}`);
        const held = ticketed.cookies.get("warden_customer_ticket") as string;
        await answerTicketQuestion(ticketed, (await ticketed.get(opened.headers.location as string)).body, "continue");
        await new TestBrowser(app).get(`${pagesOf(ws)}/sign-in?ticket=not-a-real-shape-${ticket.slice(4)}`);
        const session = browser.cookies.get(`warden_customer_${ws.slug}_test`) as string;

        const logged = lines.join("");
        // One line per request (http/request-log.ts): the journey above makes eight.
        assert.ok(lines.length >= 8, `the requests were logged: ${lines.length} lines`);
        assert.match(logged, /ticket=\[redacted\]/, "the ticket's request was logged, redacted");
        for (const secret of [session, code, verifier, device, ticket, ticket.slice(4), held, email]) {
          assert.equal(logged.includes(secret), false, `logged: ${secret.slice(0, 8)}…`);
        }
        // Only ever in the fragment of a redirect to the extension: never a server's URL.
        assert.equal(
          lines.some((line) => line.includes("wac_") && !line.includes("wac_[redacted]")),
          false,
        );
      } finally {
        await app.close();
      }
    });
  });
}
