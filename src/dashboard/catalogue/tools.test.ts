import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { main } from "../../cli.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../../test-support/harness.js";
import { createOwner, createWorkspace, listPlans, listTools } from "../../workspaces/workspace.service.js";
import { escapeHtml } from "../shared/html.js";

/** The text of a page's error notice, as the page shows it (escaped). */
/** The error notice's text, tied to a field (with an id) or not. */
const noticeOf = (response: LightMyRequestResponse) => /<div class="notice notice-error"(?: id="[^"]+")? role="alert">([^<]*)<\/div>/.exec(response.body)?.[1];

/** An owner with an empty workspace, as `warden admin workspace create` leaves it, signed in. */
async function emptyWorkspace(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const email = `${unique("owner")}@example.com`;
  const slug = unique("ws");
  await createOwner(env.services.db, env.clock, { email });
  const workspace = await createWorkspace(env.services.db, env.clock, { slug, name: "Acme", ownerEmail: email });
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, email);
  // The session's form token is on its pages.
  await browser.get(`/dashboard/w/${slug}/test`);
  return { env, app, browser, slug, email, workspace, base: `/dashboard/w/${slug}/test` };
}

for (const dialect of DIALECTS) {
  describe(`dashboard tools and plans (${dialect})`, () => {
    test("a tool is added, renamed and given a trial; its id never changes; each change is in the audit log", async () => {
      const { env, browser, slug, base } = await emptyWorkspace(dialect);
      const empty = await browser.get(`${base}/tools`);
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, /No tools yet/);

      const added = await browser.post(`${base}/tools`, { id: "tabmaster", name: "Tab Master", trial_days: "7" });
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, `${base}/tools/tabmaster?created=1`);
      const list = await browser.get(`${base}/tools`);
      assert.match(list.body, /<a href="[^"]+\/tools\/tabmaster">Tab Master<\/a>/);
      assert.match(list.body, /7-day trial/);

      const saved = await browser.post(`${base}/tools/tabmaster`, { name: "Tab Master Pro", trial_days: "14", id: "renamed" });
      assert.equal(saved.statusCode, 303);
      assert.match((await browser.get(saved.headers.location as string)).body, /Saved\./);
      const [tool] = await listTools(env.services.db, { workspace: slug });
      assert.deepEqual([tool?.id, tool?.name, tool?.trialDays], ["tabmaster", "Tab Master Pro", 14], "a posted id changes nothing");

      const off = await browser.post(`${base}/tools/tabmaster`, { name: "Tab Master Pro", trial_days: "0" });
      assert.equal(off.statusCode, 303);
      assert.match((await browser.get(`${base}/tools/tabmaster`)).body, /No trial/);

      const audit = (await browser.get("/dashboard/audit")).body;
      assert.match(audit, /Added a tool/);
      assert.equal(audit.match(/Changed a tool/g)?.length, 2);
      assert.ok(audit.includes("<code>tabmaster</code>"));
      assert.equal((await browser.get(`${base}/tools/nothing`)).statusCode, 404);
    });

    test("plans: one-time and subscription, amounts in their currency's format, renamed, retired after a confirmation", async () => {
      const { env, browser, slug, base } = await emptyWorkspace(dialect);
      await browser.post(`${base}/tools`, { id: "tabmaster", name: "Tab Master" });
      const plans = `${base}/tools/tabmaster/plans`;
      const once = await browser.post(plans, { id: "lifetime", name: "Lifetime", billing: "one_time", amount: "49.00", currency: "eur", interval: "" });
      assert.equal(once.statusCode, 303);
      assert.equal(once.headers.location, `${base}/tools/tabmaster?plan_added=lifetime#plans`);
      assert.match((await browser.get(once.headers.location as string)).body, /Plan <strong>Lifetime<\/strong> <code class="muted">lifetime<\/code> added\./);
      const yearly = { id: "yearly", name: "Yearly", billing: "subscription", amount: "50", currency: "USD", interval: "year", default: "1" };
      assert.equal((await browser.post(plans, yearly)).statusCode, 303);
      assert.equal((await browser.post(plans, { id: "yen", name: "Yen", billing: "one_time", amount: "500", currency: "jpy" })).statusCode, 303);

      const page = (await browser.get(`${base}/tools/tabmaster`)).body;
      assert.match(page, /€49\.00<\/span> <span class="muted">once, per seat</);
      assert.match(page, /\$50\.00<\/span> <span class="muted">a year/);
      assert.match(page, /¥500<\/span>/);
      assert.match(page, /badge-pending">Default/);
      const stored = await listPlans(env.services.db, { workspace: slug, tool: "tabmaster" });
      assert.deepEqual(
        stored.map((p) => [p.id, p.billing, p.amountCents, p.currency, p.interval, p.isDefault]),
        [
          ["lifetime", "one_time", 4900, "eur", null, false],
          ["yearly", "subscription", 5000, "usd", "year", true],
          ["yen", "one_time", 500, "jpy", null, false],
        ],
      );

      const renamed = await browser.post(`${plans}/lifetime`, { name: "Lifetime licence" });
      assert.equal(renamed.statusCode, 303);
      assert.match((await browser.get(renamed.headers.location as string)).body, /The plan is renamed/);
      assert.equal((await browser.post(`${plans}/lifetime`, { name: "  " })).statusCode, 400);

      const confirm = await browser.get(`${plans}/yearly/retire`);
      assert.match(confirm.body, /Retire Yearly\?/);
      assert.match(confirm.body, /It is the default plan of Tab Master/);
      const retired = await browser.post(`${plans}/yearly/retire`);
      assert.equal(retired.statusCode, 303);
      assert.match((await browser.get(retired.headers.location as string)).body, /The plan is retired/);
      const after = (await browser.get(`${base}/tools/tabmaster`)).body;
      assert.match(after, /2 offered · 1 retired/);
      assert.equal((await listPlans(env.services.db, { workspace: slug, tool: "tabmaster" })).find((p) => p.id === "yearly")?.retiredAt, env.clock.now());
      // A retired plan's confirmation page is not offered again.
      assert.equal((await browser.get(`${plans}/yearly/retire`)).statusCode, 303);
      assert.equal((await browser.get(`${plans}/nothing`)).statusCode, 404);

      const audit = (await browser.get("/dashboard/audit")).body;
      for (const action of ["Added a plan", "Renamed a plan", "Retired a plan"]) assert.match(audit, new RegExp(action));
      assert.ok(audit.includes("<code>tabmaster:yearly</code>"));
    });

    test("a plan's price is typed in the currency's major unit, beside its currency; what is not an amount in it is refused in plain words", async () => {
      const { env, browser, slug, base } = await emptyWorkspace(dialect);
      await browser.post(`${base}/tools`, { id: "tabmaster", name: "Tab Master" });
      const plans = `${base}/tools/tabmaster/plans`;
      const form = (await browser.get(`${base}/tools/tabmaster`)).body;
      // The currency is the input right after the amount, in one "Price" group.
      assert.match(
        form,
        /<legend>Price<\/legend>\s*<div class="amount-pair">\s*<div><label for="plan-amount">Amount<\/label>\s*<input id="plan-amount"[^>]*>\s*<\/div>\s*<div><label for="plan-currency">Currency<\/label>/,
      );

      const plan = { name: "Plan", billing: "one_time", interval: "" };
      const refusals: [Record<string, string>, RegExp][] = [
        [{ amount: "49,00", currency: "eur" }, /Enter the amount in euros, like 49\.00\./],
        [{ amount: "500.5", currency: "jpy" }, /Amounts in Japanese yen have no decimals: enter a whole number, like 500\./],
        [{ amount: "1.2345", currency: "kwd" }, /Amounts in Kuwaiti dinars have at most 3 decimals/],
        [{ amount: "-5", currency: "usd" }, /The amount cannot be negative/],
        [{ amount: "99999999999999999", currency: "eur" }, /The amount is too large/],
      ];
      for (const [typed, message] of refusals) {
        const refused = await browser.post(plans, { ...plan, id: "refused", ...typed });
        assert.equal(refused.statusCode, 400, typed.amount);
        assert.match(noticeOf(refused) ?? "", message, typed.amount);
        // Tied to the amount field, and what was typed is kept to correct.
        assert.match(
          refused.body,
          new RegExp(`<input id="plan-amount" aria-invalid="true" aria-describedby="plan-amount-error"[^>]*value="${escapeHtml(typed.amount ?? "")}"`),
        );
        assert.match(refused.body, new RegExp(`id="plan-currency"[^>]*value="${typed.currency}"`));
      }

      for (const [id, amount, currency] of [
        ["euro", "1,234.50", "eur"],
        ["yen", "1,500", "JPY"],
        ["dinar", "49.125", "kwd"],
        ["free", "0", "usd"],
        ["unpriced", "", "eur"],
      ] as const) {
        assert.equal((await browser.post(plans, { ...plan, id, amount, currency })).statusCode, 303, id);
      }
      const stored = await listPlans(env.services.db, { workspace: slug, tool: "tabmaster" });
      assert.deepEqual(
        stored.map((p) => [p.id, p.amountCents, p.currency]),
        [
          ["dinar", 49125, "kwd"],
          ["euro", 123450, "eur"],
          ["free", 0, "usd"],
          ["unpriced", null, "eur"],
          ["yen", 1500, "jpy"],
        ],
      );
      const page = (await browser.get(`${base}/tools/tabmaster`)).body;
      for (const shown of [/€1,234\.50/, /¥1,500/, /KWD\s49\.125/, /\$0\.00/]) assert.match(page, shown);
    });

    test("the page refuses what `warden admin` refuses, in the same words, and writes nothing", async () => {
      const { env, browser, slug, base } = await emptyWorkspace(dialect);
      await browser.post(`${base}/tools`, { id: "tabmaster", name: "Tab Master" });

      const cliEnv = await privateDatabaseEnv(dialect);
      const cli = async (...argv: string[]) => {
        let stderr = "";
        const code = await main(argv, { stdout: () => {}, stderr: (t) => (stderr += t), env: cliEnv });
        return { code, message: stderr.replace(/^warden: /, "").trim() };
      };
      const owner = `${unique("o")}@example.com`;
      await cli("admin", "owner", "create", "--email", owner);
      await cli("admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", owner);
      await cli("admin", "tool", "create", "--workspace", slug, "--id", "tabmaster", "--name", "Tab Master");

      const tool = (id: string, name: string, trial: string) => ({
        page: browser.post(`${base}/tools`, { id, name, trial_days: trial }),
        argv: ["admin", "tool", "create", "--workspace", slug, "--id", id, "--name", name, "--trial-days", trial],
      });
      const plan = (fields: { id: string; billing: string; amount?: string; currency?: string; interval?: string }) => ({
        page: browser.post(`${base}/tools/tabmaster/plans`, { name: "P", ...fields }),
        argv: [
          ...["admin", "plan", "create", "--workspace", slug, "--tool", "tabmaster", "--id", fields.id, "--name", "P", "--billing", fields.billing],
          ...(fields.amount ? ["--amount-cents", fields.amount] : []),
          ...(fields.currency ? ["--currency", fields.currency] : []),
          ...(fields.interval ? ["--interval", fields.interval] : []),
        ],
      });
      // An amount is left out: the page takes major units ("49.00") and the CLI minor units,
      // so their refusals differ in words (the page's are tested above).
      const cases = [
        tool("bad id!", "X", "0"),
        tool("tab:master", "X", "0"),
        tool("tabmaster", "Again", "0"),
        tool("other", "X", "366"),
        tool("other", "X", "2.5"),
        tool("other", " ", "0"),
        plan({ id: "p", billing: "subscription", amount: "500" }),
        plan({ id: "p", billing: "one_time", amount: "500", interval: "month" }),
        plan({ id: "p", billing: "one_time", currency: "euro" }),
        plan({ id: "p", billing: "weekly" }),
        plan({ id: ".p", billing: "one_time" }),
      ];
      for (const { page, argv } of cases) {
        const [answer, refused] = await Promise.all([page, cli(...argv)]);
        assert.equal(answer.statusCode, 400, argv.join(" "));
        assert.equal(refused.code, 1, argv.join(" "));
        assert.ok(refused.message.length > 0);
        assert.equal(noticeOf(answer), escapeHtml(refused.message), argv.join(" "));
      }
      assert.deepEqual(
        (await listTools(env.services.db, { workspace: slug })).map((t) => t.id),
        ["tabmaster"],
      );
      assert.deepEqual(await listPlans(env.services.db, { workspace: slug }), []);
      // What was typed comes back in the form, escaped.
      const kept = await browser.post(`${base}/tools`, { id: "bad id!", name: `<b>"Mine"</b>` });
      assert.ok(kept.body.includes('value="&lt;b&gt;&quot;Mine&quot;&lt;/b&gt;"'));
    });
  });
}
