// Warden's hosted pages opened by the library: the sign-in hand-off (PKCE, through
// chrome.identity or a tab that comes back to the extension's own page), page tickets,
// and the long poll held while a page is open, so that a purchase unlocks with no click.
// A fake Warden, a fake clock, fakes for chrome.tabs / identity / runtime / alarms.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { FakeClock, fakeAlarms, fakeRuntime, fakeWarden, settle, sharedStorage, TARGET, until } from "../test-support/fakes.js";
import { type AccessState, createWarden, type Identity, type Runtime, type WardenError, type WardenOptions } from "./index.js";

const URL_ = "http://warden.test";
const EXTENSION = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";
const CHROMIUMAPP = "https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org";

function setup() {
  const clock = new FakeClock();
  const warden = fakeWarden(clock);
  const storage = sharedStorage();
  const opened: string[] = [];
  const tabs = { create: (properties: { url: string }) => void opened.push(properties.url) };
  const runtime: Runtime = { ...fakeRuntime(), getURL: (path: string) => `${EXTENSION}/${path}` };
  const make = (extra: Partial<WardenOptions> = {}) =>
    createWarden({
      url: URL_,
      ...TARGET,
      clock,
      fetch: warden.fetch,
      storage: storage.area,
      alarms: null,
      runtime: null,
      identity: null,
      tabs,
      contentScript: false,
      ...extra,
    });
  return { clock, warden, storage, opened, tabs, runtime, make };
}

/** The hosted sign-in page, as far as the hand-off goes: it checks the request, the person signs in, it redirects with a code bound to the challenge. */
function signInPage(warden: ReturnType<typeof fakeWarden>, url: string, code = "code_1") {
  const page = new URL(url);
  assert.equal(page.origin + page.pathname, `${URL_}/c/${TARGET.workspace}/${TARGET.env}/${TARGET.tool}/sign-in`);
  assert.equal(page.searchParams.get("code_challenge_method"), "S256");
  const challenge = page.searchParams.get("code_challenge") ?? "";
  assert.match(challenge, /^[\w-]{43}$/);
  warden.codes.set(code, challenge);
  return `${page.searchParams.get("redirect_uri")}#code=${code}&state=${page.searchParams.get("state")}`;
}

function fakeIdentity(answer: (url: string) => Promise<string | undefined>): Identity & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    getRedirectURL: (path = "") => `${CHROMIUMAPP}/${path}`,
    launchWebAuthFlow: async ({ url, interactive }) => {
      assert.equal(interactive, true);
      asked.push(url);
      return answer(url);
    },
  };
}

async function signedIn(s: ReturnType<typeof setup>) {
  const identity = fakeIdentity(async (url) => signInPage(s.warden, url));
  await s.make({ identity }).openSignInPage();
  s.warden.calls.length = 0;
}

const pageOf = (url: string | undefined) => {
  const page = new URL(url ?? "");
  return { path: page.pathname, params: Object.fromEntries(page.searchParams) };
};

describe("openSignInPage: the hosted sign-in page hands the device session to the extension", () => {
  test("through chrome.identity: signed in with the code from the redirect's fragment and the verifier, nothing typed into the extension", async () => {
    const s = setup();
    s.warden.answer = { entitled: true, via: "licence", plan: "lifetime", trial_ends_at: null, recheck_after: 900 };
    const identity = fakeIdentity(async (url) => signInPage(s.warden, url));
    const client = s.make({ identity });
    const seen: AccessState[] = [];
    client.onAccessChange((state) => seen.push(state));

    const signed = await client.openSignInPage();
    assert.equal(signed?.email, "ada@example.com");
    const asked = new URL(identity.asked[0] ?? "");
    assert.equal(asked.searchParams.get("redirect_uri"), `${CHROMIUMAPP}/warden`);
    assert.deepEqual(
      s.warden.calls.filter((c) => c.startsWith("POST")),
      [`POST /api/client/v1/tools/${TARGET.tool}/sign-in/exchange`],
    );
    const state = await client.access();
    assert.deepEqual([state.signedIn, state.entitled, state.email], [true, true, "ada@example.com"]);
    assert.equal(seen.at(-1)?.entitled, true);
    assert.equal(s.opened.length, 0, "no tab: the browser's sign-in window");
  });

  test("a redirect whose state is not this extension's, or a window closed, signs nothing in; a code is tried once", async () => {
    const s = setup();
    const forged = fakeIdentity(async (url) => signInPage(s.warden, url).replace(/state=[^&]+/, "state=forged"));
    const client = s.make({ identity: forged });
    await assert.rejects(client.openSignInPage(), (error: WardenError) => error.param === "state");
    assert.equal((await client.access()).signedIn, false);

    const closed = s.make({ identity: fakeIdentity(async () => Promise.reject(new Error("The user did not approve access."))) });
    await assert.rejects(closed.openSignInPage(), /did not approve/);
    assert.equal((await closed.access()).signedIn, false);

    // Another verifier than the challenge's: the exchange refuses, and the same redirect cannot be tried again.
    let back = "";
    const stolen = s.make({
      identity: fakeIdentity(async (url) => {
        back = signInPage(s.warden, url, "code_2");
        s.warden.codes.set("code_2", createHash("sha256").update("someone else's verifier").digest("base64url"));
        return back;
      }),
    });
    await assert.rejects(stolen.openSignInPage(), (error: WardenError) => error.status === 400);
    await assert.rejects(stolen.completeSignIn(back), (error: WardenError) => error.param === "state");
    assert.equal((await stolen.access()).signedIn, false);
  });

  test("without chrome.identity: a tab that comes back to the extension's own page, whose completeSignIn() signs every part in", async () => {
    const s = setup();
    const popup = s.make({ runtime: s.runtime });
    const seen: AccessState[] = [];
    popup.onAccessChange((state) => seen.push(state));
    assert.equal(await popup.openSignInPage(), null, "the popup closes when the tab opens: nothing to wait for here");
    const page = pageOf(s.opened[0]);
    assert.equal(page.params.redirect_uri, `${EXTENSION}/warden-signed-in.html`);

    const callback = s.make({ runtime: s.runtime });
    const back = signInPage(s.warden, s.opened[0] ?? "");
    const signed = await callback.completeSignIn(back);
    assert.equal(signed.email, "ada@example.com");
    await until(() => seen.at(-1)?.signedIn === true, "the popup sees the sign-in");
    await assert.rejects(callback.completeSignIn(back), (error: WardenError) => error.param === "state", "a used hand-off is gone");
    await s.clock.advance(16 * 60_000);
    const late = s.make({ runtime: s.runtime });
    await late.openSignInPage();
    await s.clock.advance(16 * 60_000);
    await assert.rejects(late.completeSignIn(signInPage(s.warden, s.opened[1] ?? "", "code_3")), /too old/);
  });
});

describe("openSignInPage from a popup", () => {
  test("the service worker runs the hand-off (a popup closes when the sign-in window opens), and the popup sees the result", async () => {
    const s = setup();
    const identity = fakeIdentity(async (url) => signInPage(s.warden, url));
    const worker = s.make({ runtime: s.runtime, identity });
    worker.startBackground();
    const popup = s.make({ runtime: s.runtime, identity: null });
    const signed = await popup.openSignInPage();
    assert.equal(signed?.email, "ada@example.com");
    assert.equal(identity.asked.length, 1, "the worker's chrome.identity opened the page");
    assert.equal((await popup.access()).signedIn, true);

    const refused = s.make({ runtime: s.runtime, identity: null });
    identity.launchWebAuthFlow = async () => Promise.reject(new Error("The user did not approve access."));
    await assert.rejects(refused.openSignInPage(), (error: WardenError) => /did not approve/.test(error.message));
  });
});

describe("openPaymentPage, openTrialPage, openManagePage", () => {
  test("signed in: the page opens with a page ticket, and a purchase made there unlocks within the long poll's answer, no click", async () => {
    const s = setup();
    await signedIn(s);
    const client = s.make();
    const seen: AccessState[] = [];
    client.onAccessChange((state) => seen.push(state));
    await client.access();

    await client.openPaymentPage({ plan: "lifetime" });
    const page = pageOf(s.opened[0]);
    assert.equal(page.path, `/c/${TARGET.workspace}/${TARGET.env}/${TARGET.tool}/plans`);
    assert.deepEqual(page.params, { plan: "lifetime", ticket: "wpt_fake" });
    await until(() => s.warden.waits.length === 1, "the long poll");

    s.warden.change({ entitled: true, via: "licence", plan: "lifetime" });
    await until(() => seen.at(-1)?.entitled === true, "onAccessChange with the purchase");
    assert.equal(seen.at(-1)?.plan, "lifetime");
    await until(() => s.warden.waits.length === 1, "waiting on for later changes");
    assert.equal(
      s.warden.waits[0]?.state,
      ((await s.storage.area.get(`warden:${TARGET.workspace}:${TARGET.env}:${TARGET.tool}:access`)) as { state: string }).state,
    );

    // Nothing more within 30 minutes: the waits end and no new one starts.
    await s.clock.advance(30 * 60_000);
    s.warden.timeOut();
    await settle();
    assert.equal(s.warden.waits.length, 0);
  });

  test('a wait that answers "no change" at once is asked again after a pause of 5 to 10 s, not at once', async () => {
    const s = setup();
    await signedIn(s);
    const client = s.make();
    await client.openManagePage();
    await until(() => s.warden.waits.length === 1, "the long poll");
    s.warden.timeOut();
    await settle();
    await s.clock.advance(4_999);
    await settle();
    assert.equal(s.warden.waits.length, 0, "no new wait within 5 s");
    await s.clock.advance(5_001);
    await until(() => s.warden.waits.length === 1, "waiting again within 10 s");
    s.warden.timeOut();
  });

  test("the page opens in the browser's language (chrome.i18n.getUILanguage), and without one when there is none or it throws", async () => {
    const s = setup();
    await s.make({ i18n: { getUILanguage: () => "de-AT" } }).openPaymentPage({ plan: "lifetime" });
    assert.deepEqual(pageOf(s.opened[0]).params, { plan: "lifetime", lang: "de-AT" });
    await s.make({ i18n: null }).openManagePage();
    assert.deepEqual(pageOf(s.opened[1]).params, {});
    await s
      .make({
        i18n: {
          getUILanguage: () => {
            throw new Error("no i18n here");
          },
        },
      })
      .openTrialPage();
    assert.deepEqual(pageOf(s.opened[2]).params, {});
  });

  test("signIn asks for the code's mail in the browser's language; a tag Warden would refuse, or none, is not sent", async () => {
    const s = setup();
    const sent: { lang?: string }[] = [];
    const fetch: typeof s.warden.fetch = async (input, init) => {
      if (String(input).endsWith("/api/client/v1/sign-in")) sent.push(JSON.parse(String(init?.body)));
      return s.warden.fetch(input, init);
    };
    await s.make({ fetch, i18n: { getUILanguage: () => "pt-BR" } }).signIn("ana@example.com");
    await s.make({ fetch, i18n: { getUILanguage: () => "not a tag!" } }).signIn("ana@example.com");
    await s.make({ fetch, i18n: null }).signIn("ana@example.com");
    assert.deepEqual(
      sent.map((body) => body.lang),
      ["pt-BR", undefined, undefined],
    );
  });

  test("signed out: the page opens without a ticket and nothing waits; Trial and Manage open their pages", async () => {
    const s = setup();
    const client = s.make();
    await client.openPaymentPage();
    assert.deepEqual(pageOf(s.opened[0]), { path: `/c/${TARGET.workspace}/${TARGET.env}/${TARGET.tool}/plans`, params: {} });
    await settle();
    assert.equal(s.warden.waits.length, 0);
    assert.deepEqual(s.warden.calls, []);

    await signedIn(s);
    await client.openTrialPage();
    await client.openManagePage();
    assert.deepEqual(
      s.opened.slice(1).map((url) => [pageOf(url).path.split("/").at(-1), pageOf(url).params.ticket]),
      [
        ["trial", "wpt_fake"],
        ["manage", "wpt_fake"],
      ],
    );
    await until(() => s.warden.waits.length === 1, "one long poll however many pages");
    s.warden.timeOut();
  });

  test("a device signed out elsewhere: the page opens for signing in, and a long poll's 401 signs the extension out", async () => {
    const s = setup();
    await signedIn(s);
    const client = s.make();
    const seen: AccessState[] = [];
    client.onAccessChange((state) => seen.push(state));
    await client.openManagePage();
    await until(() => s.warden.waits.length === 1, "the long poll");
    s.warden.signedOut = true;
    s.warden.timeOut();
    // The pause after a quick "no change" is 5 to 10 s.
    await s.clock.advance(10_000);
    await until(() => seen.at(-1)?.signedIn === false, "signed out at the next wait");

    await client.openManagePage();
    assert.equal(pageOf(s.opened[1]).params.ticket, undefined);
  });

  test("a popup hands the wait to the service worker, which holds one wait and keeps it across a restart", async () => {
    const s = setup();
    await signedIn(s);
    const alarms = fakeAlarms();
    const worker = s.make({ runtime: s.runtime, alarms: alarms.api });
    worker.startBackground();
    const popup = s.make({ runtime: s.runtime });
    await popup.openTrialPage();
    await until(() => s.warden.waits.length === 1, "the worker's long poll");
    await settle();
    assert.equal(s.warden.waits.length, 1, "the popup does not wait too");
    assert.ok(alarms.alarms.has(`warden:${TARGET.workspace}:${TARGET.env}:${TARGET.tool}:watch`), "an alarm wakes a stopped worker to wait on");

    // The browser stops the worker (its request ends with it) and starts a new one.
    s.warden.waits.length = 0;
    alarms.stopWorker();
    const restarted = s.make({ runtime: s.runtime, alarms: alarms.api });
    restarted.startBackground();
    await until(() => s.warden.waits.length === 1, "the restarted worker waits on");
    const seen: AccessState[] = [];
    popup.onAccessChange((state) => seen.push(state));
    s.warden.change({ entitled: true, via: "trial" });
    await until(() => seen.at(-1)?.entitled === true, "the popup sees the trial");
  });
});
