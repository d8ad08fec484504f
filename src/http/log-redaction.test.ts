// The log of a whole journey holds no secret, no login-link token and no customer's or
// owner's address: sign-in by code and by the operator's link, a customer's page and the
// API's lookup by address, Stripe's signing secret, an invitation, a live key.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildApp } from "../app.js";
import { createOwnerLoginLink } from "../owners/owner-sign-in.service.js";
import { dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../test-support/harness.js";
import { redactSecrets, redactUrl } from "./log-redaction.js";

describe("log redaction", () => {
  test("secrets keep their prefix only; addresses, typed or percent-encoded, are gone", () => {
    assert.equal(
      redactSecrets("GET /dashboard/sign-in/link/wdl_abcDEF0123456789 ada%40example.com bob@mail.example.org whsec_XyZ12345 wk_live_abcd1234"),
      "GET /dashboard/sign-in/link/wdl_[redacted] [email] [email] whsec_[redacted] wk_live_[redacted]",
    );
    assert.equal(redactSecrets("req_01abc lic_0123 evt_42 plain words"), "req_01abc lic_0123 evt_42 plain words", "ids are not secrets");
    assert.equal(
      redactSecrets('"url":"/c/acme/live/tabmaster/plans?plan=monthly&ticket=wpt_abcDEF0123456789" wcs_abcd1234 wcb_abcd1234 wac_abcd1234'),
      '"url":"/c/acme/live/tabmaster/plans?plan=monthly&ticket=[redacted]" wcs_[redacted] wcb_[redacted] wac_[redacted]',
      "the hosted pages' tokens, and a ticket in a query whatever its shape",
    );
    assert.equal(redactSecrets("GET /c/acme/live/tabmaster/manage?ticket=garbled"), "GET /c/acme/live/tabmaster/manage?ticket=[redacted]");
    assert.equal(redactSecrets("o'brien*x~y!z@example.com"), "[email]", "a local part with the characters a URL leaves unencoded");
  });

  test("a URL loses every segment and value with an @, and the address parameters whatever they hold", () => {
    assert.equal(redactUrl("/api/v1/tools/tabmaster/customers/ada%40localhost"), "/api/v1/tools/tabmaster/customers/[email]", "no top-level domain");
    assert.equal(
      redactUrl("/dashboard/w/acme/test/customers/tabmaster/ada%2540example.com/grants"),
      "/dashboard/w/acme/test/customers/tabmaster/[email]/grants",
    );
    assert.equal(
      redactUrl("/dashboard/w/acme/test/customers?tool=tabmaster&q=ada.lovelace%40&after=abc.def"),
      "/dashboard/w/acme/test/customers?tool=tabmaster&q=[email]&after=abc.def",
      "a search for part of an address",
    );
    assert.equal(
      redactUrl("/dashboard/w/acme/test/customers?q=lovelace"),
      "/dashboard/w/acme/test/customers?q=[email]",
      "a search holds part of an address without its @ too",
    );
    assert.equal(redactUrl("/dashboard/w/acme/test/owners?invited=bob%40Example.COM&x"), "/dashboard/w/acme/test/owners?invited=[email]&x");
    assert.equal(redactUrl("/c/acme/test/tabmaster/sign-in?email=ada&state=a%40b"), "/c/acme/test/tabmaster/sign-in?email=[email]&state=[email]");
    assert.equal(
      redactUrl("/dashboard/w/acme/test/customers?%71=lovelace&%E0=x"),
      "/dashboard/w/acme/test/customers?%71=[email]&%E0=x",
      "a name read as the server reads it",
    );
    assert.equal(redactUrl("/api/v1/tools/tabmaster/grants?limit=10"), "/api/v1/tools/tabmaster/grants?limit=10", "nothing else changes");
  });
});

for (const dialect of DIALECTS) {
  describe(`the log of a journey (${dialect})`, () => {
    test("holds none of the secrets, tokens and addresses the journey used", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "50" });
      const lines: string[] = [];
      const app = await buildApp(env.services, { logger: { level: "info", stream: { write: (line: string) => lines.push(line) } } });
      await app.ready();
      try {
        const ws = await seedWorkspace(env.services);
        const customer = `${unique("ada")}@example.com`;
        const invited = `${unique("colleague")}@example.com`;
        const signingSecret = `whsec_${unique("journey").replace("-", "")}Secret`;

        const browser = new TestBrowser(app);
        await browser.signIn(env.dataDir, ws.ownerEmail);
        const { token } = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
        const linked = new TestBrowser(app);
        assert.equal((await linked.get(`/dashboard/sign-in/link/${token}`)).statusCode, 200);
        assert.equal((await linked.post(`/dashboard/sign-in/link/${token}`)).statusCode, 303);

        const base = `/dashboard/w/${ws.slug}/test`;
        assert.equal((await browser.get(`${base}/customers/${ws.tool}/${encodeURIComponent(customer)}`)).statusCode, 200);
        assert.equal((await browser.get(`${base}/customers/search?tool=${ws.tool}&email=${encodeURIComponent(customer)}`)).statusCode, 303);
        assert.equal((await browser.postWithCode(env.dataDir, ws.ownerEmail, `${base}/stripe`, { webhook_secret: signingSecret })).statusCode, 303);
        assert.equal((await browser.postWithCode(env.dataDir, ws.ownerEmail, `${base}/owners/invite`, { email: invited })).statusCode, 303);
        const confirmed = await browser.postWithCode(env.dataDir, ws.ownerEmail, `/dashboard/w/${ws.slug}/live/keys`, { name: "server" });
        // The new key is shown once, on the page the POST redirects to.
        const created = await browser.get(confirmed.headers.location as string);
        const [liveKey] = created.body.match(/wk_live_[0-9A-Za-z]{32}/) ?? [];
        assert.ok(liveKey);
        const api = await app.inject({
          url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(customer)}`,
          headers: { authorization: `Bearer ${ws.testKey}` },
        });
        assert.equal(api.statusCode, 404);

        const log = lines.join("");
        for (const secret of [ws.ownerEmail, customer, encodeURIComponent(customer), invited, token, signingSecret, liveKey, ws.testKey]) {
          assert.equal(log.includes(secret), false, `${secret.slice(0, 12)}… is in the log`);
        }
        assert.ok(log.includes("[email]") && log.includes("wdl_[redacted]"), "the journey was logged");
      } finally {
        await app.close();
      }
    });
  });
}
