// The example extension in a real browser (Debian's chromium, driven by playwright-core,
// with the extension loaded unpacked) against Warden listening on 127.0.0.1, on SQLite
// and PostgreSQL. Warden's clock is the test's: set a few seconds before a one-day grant
// ends, every check answers a token of those few seconds, so expiry and the alarm's
// recheck happen in seconds of real time. Set WARDEN_SCREENSHOTS=<folder> to keep a
// picture of the popup in each state.
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/app.js";
import { DAY_MS, toIso } from "../../src/clock.js";
import { randomBase62 } from "../../src/ids.js";
import { importNdjson } from "../../src/import/import.service.js";
import { shoot } from "../../src/test-support/browser.js";
import { dashboardServices, readCode } from "../../src/test-support/dashboard.js";
import { DIALECTS, seedCatalogue } from "../../src/test-support/harness.js";
import { freePort } from "../../src/test-support/serve.js";
import { seedUsageCatalogue } from "../../src/test-support/usage.js";
import { updateTool } from "../../src/workspaces/workspace.service.js";
import { compileLibrary, exampleCopy, type LaunchedExample, launchExample, waitForState } from "./test-support/example.js";

const JOURNEY_TIMEOUT_MS = 240_000;
/** The life of a token near the grant's end: short enough to wait for, long enough for a slow machine to act within. */
const TOKEN_S = 8;

const library = compileLibrary();
after(() => rm(library, { recursive: true, force: true }));

for (const dialect of DIALECTS) {
  describe(`the example extension in Chromium (${dialect})`, () => {
    test("sign in with the mailed code; locked, unlocked by a grant, offline until exp, locked by a revocation; a trial; a licence key", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      const { services, clock } = env;
      clock.set(Date.now());
      const ws = await seedCatalogue(services);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "14" });
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const accessChecks: number[] = [];
      const startWarden = async () => {
        const app = await buildApp(services, { logger: false });
        app.addHook("onResponse", async (request) => {
          if (request.url.endsWith("/access")) accessChecks.push(Date.now());
        });
        await app.listen({ host: "127.0.0.1", port });
        return app;
      };
      let warden = await startWarden();
      const extension = exampleCopy(library, { url: base, workspace: ws.slug, tool: ws.tool, env: "test", successUrl: "https://tabmaster.example/thanks" });
      let example: LaunchedExample | null = null;
      const vendor = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${base}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${ws.testKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        assert.ok(response.ok, await response.clone().text());
        return (await response.json()) as Record<string, unknown>;
      };
      try {
        example = await launchExample(extension.dir, { viewport: { width: 360, height: 420 } });
        const { context, extensionId } = example;
        const errors: string[] = [];
        let popup = await example.openPopup(errors);
        await waitForState(popup, "signed-out");
        await shoot(popup, `${dialect}-1-signed-out`, { fullPage: false });

        // Sign in: the code comes from Warden's outbox, as a person reads it from their mail.
        const email = `ada-${ws.slug}@example.com`;
        await popup.fill("#email", email);
        await popup.click("#email-form button");
        await waitForState(popup, "code");
        await shoot(popup, `${dialect}-2-code`, { fullPage: false });
        await popup.fill("#code-input", await readCode(env.dataDir, email));
        await popup.click("#code-form button");
        await waitForState(popup, "locked");
        assert.equal(await popup.textContent("#who-line"), `Signed in as ${email}`);
        await shoot(popup, `${dialect}-3-locked`, { fullPage: false });

        // A web page: the content script shows the state it reads from the extension's storage.
        const site = await context.newPage();
        await site.goto(`${base}/dashboard/sign-in`);
        await site.waitForSelector("#tabmaster-warden-example[data-entitled=false]", { state: "attached" });

        // The vendor grants a day, and Warden's clock stands a few seconds before it ends:
        // the next check unlocks, with a token of those few seconds.
        const grant = await vendor("POST", `/tools/${ws.tool}/grants`, { email, days: 1 });
        clock.set(Date.parse(String(grant.starts_at)) + DAY_MS - TOKEN_S * 1000);
        await popup.click("#recheck");
        await waitForState(popup, "unlocked");
        assert.match((await popup.textContent("#detail")) ?? "", /by a grant/);
        await site.waitForSelector("#tabmaster-warden-example[data-entitled=true]", { state: "attached" });
        await shoot(popup, `${dialect}-4-unlocked`, { fullPage: false });
        await shoot(site, `${dialect}-4-page-badge`, { fullPage: false });

        // Nothing of the extension is open but its service worker, and the browser stops it:
        // the alarm it set wakes it to renew the answer before it runs out.
        await site.close();
        await popup.close();
        const blank = await context.newPage();
        const cdp = await context.newCDPSession(blank);
        const workerStates: string[] = [];
        cdp.on("ServiceWorker.workerVersionUpdated", ({ versions }) => {
          for (const version of versions) if (version.scriptURL.startsWith(`chrome-extension://${extensionId}/`)) workerStates.push(version.runningStatus);
        });
        await cdp.send("ServiceWorker.enable");
        await cdp.send("ServiceWorker.stopAllWorkers");
        const stoppedAt = Date.now();
        const rechecked = () => accessChecks.some((at) => at > stoppedAt);
        while (!rechecked() && Date.now() < stoppedAt + (TOKEN_S + 5) * 1000) await blank.waitForTimeout(200);
        assert.ok(rechecked(), "the stopped worker was woken by its alarm and rechecked");
        assert.ok(workerStates.lastIndexOf("stopped") >= 0 && workerStates.lastIndexOf("running") > workerStates.indexOf("stopped"), workerStates.join(","));

        // Warden stops: the held answer stands until the token's exp, and not a moment after.
        await stopWarden(warden);
        popup = await example.openPopup(errors);
        await waitForState(popup, "unlocked");
        const expiresAt = await popup.evaluate(async () => {
          const { chrome } = globalThis as unknown as { chrome: { storage: { local: { get(keys: null): Promise<Record<string, { expiresAt?: number }>> } } } };
          return Math.max(...Object.values(await chrome.storage.local.get(null)).map((v) => v.expiresAt ?? 0));
        });
        assert.ok(expiresAt > Date.now(), "a valid answer is held");
        await shoot(popup, `${dialect}-5-offline-unlocked`, { fullPage: false });
        await waitForState(popup, "locked", expiresAt - Date.now() + 3_000);
        const lockedAt = Date.now();
        assert.ok(lockedAt >= expiresAt, `locked at ${toIso(lockedAt)}, not before exp ${toIso(expiresAt)}`);
        assert.match((await popup.textContent("#detail")) ?? "", /cannot be reached/);
        await shoot(popup, `${dialect}-6-offline-expired`, { fullPage: false });

        // Warden is back: the next check unlocks again. The vendor revokes: locked within recheck_after, with no one asking.
        warden = await startWarden();
        await popup.click("#recheck");
        await waitForState(popup, "unlocked");
        await vendor("DELETE", `/tools/${ws.tool}/grants/${grant.id}`);
        const revokedAt = Date.now();
        await waitForState(popup, "locked", (TOKEN_S + 3) * 1000);
        assert.ok(Date.now() - revokedAt <= (TOKEN_S + 1) * 1000, "locked within recheck_after");
        await shoot(popup, `${dialect}-7-revoked`, { fullPage: false });

        // The trial, started from the popup.
        await popup.click("#trial");
        await waitForState(popup, "unlocked");
        assert.match((await popup.textContent("#detail")) ?? "", /by the trial.*Trial ends/);
        await shoot(popup, `${dialect}-8-trial`, { fullPage: false });

        // Another person's licence key, on this browser signed out: no sign-in, the key alone.
        const buyer = `buyer-${ws.slug}@example.com`;
        const licence = `lic_${randomBase62(24)}`;
        await importNdjson(services.db, services.clock, {
          workspace: ws.slug,
          env: "test",
          text: JSON.stringify({
            type: "licence",
            id: licence,
            email: buyer,
            tool: ws.tool,
            plan: "lifetime",
            purchased_at: toIso(clock.now() - 60_000),
            amount_cents: 4900,
            currency: "eur",
            payment_intent: `pi_${licence}`,
          }),
        });
        const key = await licenceKeyOf(base, ws.slug, ws.tool, buyer, env.dataDir);
        await popup.click("#sign-out");
        await waitForState(popup, "signed-out");
        await popup.click("summary");
        await popup.fill("#key", key);
        await popup.click("#key-form button");
        await waitForState(popup, "unlocked");
        assert.match((await popup.textContent("#detail")) ?? "", /by a licence \(lifetime\)/);
        assert.equal(await popup.textContent("#who-line"), "Activated with a licence key");
        await shoot(popup, `${dialect}-9-licence`, { fullPage: false });
        assert.deepEqual(errors, [], "no script error in the popup");
      } catch (error) {
        for (const [i, page] of (example?.context.pages() ?? []).entries()) await shoot(page, `${dialect}-failed-${i}`, { fullPage: false }).catch(() => {});
        throw error;
      } finally {
        await example?.close();
        await stopWarden(warden);
        extension.remove();
      }
    });

    test("Use one: spends a unit and shows what is left (allowance, credits, reset); the refusal when nothing is left; credits added show at the next check", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      const { services, clock } = env;
      clock.set(Date.now());
      const ws = await seedUsageCatalogue(services);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const warden = await buildApp(services, { logger: false });
      await warden.listen({ host: "127.0.0.1", port });
      const extension = exampleCopy(library, {
        url: base,
        workspace: ws.slug,
        tool: ws.tool,
        env: "test",
        successUrl: "https://tabmaster.example/thanks",
        meter: "summaries",
      });
      let example: LaunchedExample | null = null;
      const vendor = async (path: string, body: unknown) => {
        const response = await fetch(`${base}/api/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        assert.ok(response.ok, await response.clone().text());
      };
      try {
        example = await launchExample(extension.dir, { viewport: { width: 360, height: 480 } });
        const errors: string[] = [];
        const popup = await example.openPopup(errors);
        await waitForState(popup, "signed-out");
        const email = `meter-${ws.slug}@example.com`;
        await popup.fill("#email", email);
        await popup.click("#email-form button");
        await waitForState(popup, "code");
        await popup.fill("#code-input", await readCode(env.dataDir, email));
        await popup.click("#code-form button");
        await waitForState(popup, "locked");
        const usage = () => popup.textContent("#usage");
        const resets = `Resets ${await popup.evaluate(() => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toLocaleDateString())}.`;
        await popup.waitForSelector("#usage:has-text('10 summaries left')");
        assert.equal(await usage(), `10 summaries left: 10 of 10 this period, 0 credits. ${resets}`, "the tool's free allowance");

        await popup.click("#use-one");
        await popup.waitForSelector("#usage:has-text('9 summaries left')");
        assert.equal(await usage(), `9 summaries left: 9 of 10 this period, 0 credits. ${resets}`);
        await shoot(popup, `${dialect}-usage-1-used-one`, { fullPage: false });

        // Another device of the person spends all but one; the popup's next use takes the last, then is refused.
        await vendor(`/tools/${ws.tool}/customers/${email}/usage`, { meter: "summaries", quantity: 8 });
        await popup.click("#use-one");
        await popup.waitForSelector("#usage:has-text('0 summaries left')");
        assert.equal(await popup.isHidden("#error"), true);
        await popup.click("#use-one");
        await popup.waitForSelector("#error:visible");
        assert.equal(
          await popup.textContent("#error"),
          `No summaries left to use. The allowance ${resets.toLowerCase().replace(/\.$/, "")}. Credits are on the Plans page.`,
        );
        assert.equal(await usage(), `0 summaries left: 0 of 10 this period, 0 credits. ${resets}`);
        await shoot(popup, `${dialect}-usage-2-refused`, { fullPage: false });

        // The vendor adds credits: the answer's version moves, so the next check re-reads the meter.
        await vendor(`/tools/${ws.tool}/customers/${email}/credits`, { meter: "summaries", amount: 5, note: "Thanks for waiting" });
        await popup.click("#recheck");
        await popup.waitForSelector("#usage:has-text('5 summaries left')");
        assert.equal(await usage(), `5 summaries left: 0 of 10 this period, 5 credits. ${resets}`);
        await popup.click("#use-one");
        await popup.waitForSelector("#usage:has-text('4 summaries left')");
        assert.equal(await popup.isHidden("#error"), true, "a spend that goes through clears the refusal");
        await shoot(popup, `${dialect}-usage-3-credits`, { fullPage: false });
        assert.deepEqual(errors, [], "no script error in the popup");
      } catch (error) {
        for (const [i, page] of (example?.context.pages() ?? []).entries())
          await shoot(page, `${dialect}-usage-failed-${i}`, { fullPage: false }).catch(() => {});
        throw error;
      } finally {
        await example?.close();
        await stopWarden(warden);
        extension.remove();
      }
    });
  });
}

/**
 * Stops Warden at once. A graceful close would wait for the sockets Chromium opens ahead
 * of need (no request on them yet) until Node's headers timeout, a minute later.
 */
async function stopWarden(app: FastifyInstance): Promise<void> {
  const closed = app.close();
  app.server.closeAllConnections();
  await closed;
}

/** The key its buyer sees in their purchases (signed in over the client API, as their own extension would). */
async function licenceKeyOf(base: string, workspace: string, tool: string, email: string, dataDir: string): Promise<string> {
  const post = (path: string, body: unknown) =>
    fetch(`${base}/api/client/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.equal((await post("/sign-in", { workspace, tool, email, env: "test" })).status, 200);
  const verified = await post("/sign-in/verify", {
    workspace,
    tool,
    email,
    env: "test",
    code: await readCode(dataDir, email),
    device: { name: "Buyer's laptop", platform: "chrome-linux" },
  });
  const { token } = (await verified.json()) as { token: string };
  const purchases = (await (await fetch(`${base}/api/client/v1/purchases`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    data: { key: string | null }[];
  };
  const key = purchases.data[0]?.key;
  assert.ok(key, "the buyer sees the licence key");
  return key;
}
