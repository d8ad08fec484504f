// The buyer's language beyond Warden's own sentences (issue 51, points 3 and 4): the
// workspace's default language (Configure › Branding), the vendor's names per language
// on every hosted page, the sign-in mail and Stripe Checkout's line item, the refusals a
// page shows in the page's language, and the client API's sign-in mail in the language
// the extension asks for. In process, against a local stand-in of Stripe's API, on both
// engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiError, invalidParameter } from "../errors/errors.js";
import { messagesFor } from "../i18n/messages.js";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, readCodeMail, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS } from "../test-support/harness.js";
import { connectTestStripe } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { readSubjectNames, setSubjectNames } from "../workspaces/translated-names.service.js";
import { updateTool } from "../workspaces/workspace.service.js";
import { brandOf, updateBranding } from "./branding.service.js";
import { pageText } from "./layout.js";
import { refusalWords } from "./refusals.views.js";

const SECRET_KEY = "sk_test_buyerLanguageStandIn01";

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const stripeApi = await startStripeApi();
  const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
  const app = await dashboardApp(env);
  const ws = await seedUsageCatalogue(env.services);
  await connectTestStripe(env.services, ws, "test", SECRET_KEY);
  return { env, app, ws, base: pagesOf(ws), stripeApi };
}

const refusal = (error: unknown) => (error instanceof ApiError ? { code: error.code, param: error.param } : error);

for (const dialect of DIALECTS) {
  describe(`hosted pages: the workspace's language and the vendor's names (${dialect})`, () => {
    test("a workspace's default language speaks when nothing else asks; ?lang=, the cookie and Accept-Language go before it", async () => {
      const { env, app, ws, base } = await setUp(dialect);
      const browser = new TestBrowser(app);
      assert.match((await browser.get(`${base}/plans`)).body, /<html lang="en">/, "none set: English");
      const set = await updateBranding(env.services, { workspace: ws.slug, language: "DE" });
      assert.equal(set.language, "de", "the tag as Warden spells it");
      const plans = await browser.get(`${base}/plans`);
      assert.match(plans.body, /<html lang="de">/);
      assert.match(plans.body, /<h1>Tarife für Tab Master<\/h1>/);
      assert.equal(plans.headers["content-language"], "de");
      assert.equal(plans.headers["set-cookie"], undefined, "the default is not the buyer's choice: no cookie");
      assert.match((await browser.get(`${base}/trial`, { "accept-language": "ja" })).body, /<html lang="ja">/, "the browser's language first");
      assert.match((await browser.get(`${base}/trial`, { "accept-language": "xx, *" })).body, /<html lang="de">/, "one Warden does not speak passes on to it");
      assert.match((await browser.get(`${base}/sign-in?lang=en`)).body, /<html lang="en">/, "?lang= first");
      assert.match((await browser.get(`${base}/sign-in`)).body, /<html lang="en">/, "then the cookie ?lang= set");
      // The sign-in mail speaks it too.
      const other = new TestBrowser(app);
      await other.get(`${base}/sign-in`);
      assert.equal((await other.post(`${base}/sign-in`, { email: "dora@example.com" })).statusCode, 303);
      assert.match((await readCodeMail(env.dataDir, "dora@example.com")) ?? "", /Subject: \d{6} ist Ihr Anmeldecode für Tab Master\n/);
      // Cleared, English again.
      await updateBranding(env.services, { workspace: ws.slug, language: "" });
      assert.match((await new TestBrowser(app).get(`${base}/plans`)).body, /<html lang="en">/);
    });

    test("a default language Warden does not speak is refused, in the error catalogue's shape, and nothing is written", async () => {
      const { env, app, ws } = await setUp(dialect);
      await updateBranding(env.services, { workspace: ws.slug, language: "ja" });
      for (const wrong of ["xx", "de-AT", "ar", "en-XA", "<b>de</b>"]) {
        await assert.rejects(updateBranding(env.services, { workspace: ws.slug, language: wrong, accent: "#1f6f43" }), (error) => {
          assert.deepEqual(refusal(error), { code: "invalid_parameter", param: "language" }, wrong);
          return true;
        });
      }
      const brand = await brandOf(env.services, { id: ws.workspaceId });
      assert.equal(brand?.language, "ja");
      assert.equal(brand?.accent, null, "the accent given with a refused language is not written either");
      // Configure › Branding: the same use case, the refusal at its field.
      const owner = new TestBrowser(app);
      await owner.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/branding`;
      const form = await owner.get(page);
      assert.match(form.body, /<option value="ja" lang="ja" selected>日本語 \(ja\)<\/option>/);
      const refused = await owner.post(`${page}/language`, { language: "klingon" });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /id="language" name="language" aria-invalid="true" aria-describedby="language-error"/);
      assert.match(refused.body, /The language must be one of en, de, fr/);
      const saved = await owner.post(`${page}/language`, { language: "pt-BR" });
      assert.equal(saved.statusCode, 303);
      assert.match((await owner.get(saved.headers.location as string)).body, /The default language is saved/);
      assert.equal((await brandOf(env.services, { id: ws.workspaceId }))?.language, "pt-BR");
      const audit = await env.services.db
        .selectFrom("audit_log")
        .select("subject")
        .where("workspace_id", "=", ws.workspaceId)
        .where("action", "=", "workspace.branding_changed")
        .execute();
      assert.deepEqual(
        audit.map((a) => a.subject),
        ["language"],
        "the owner's change is audited; the use case called without an actor is not",
      );
    });

    test("the vendor's names in the page's language on Plans, Trial, sign-in, Manage and Checkout; the default in any other; escaped", async () => {
      const { env, app, ws, base, stripeApi } = await setUp(dialect);
      const { db, clock } = env.services;
      const at = (kind: "product" | "plan" | "feature" | "meter", productId: string, itemId = "", productKind: "tool" | "bundle" = "tool") => ({
        kind,
        productKind,
        productId,
        itemId,
      });
      const de = (subject: ReturnType<typeof at>, name: string) => setSubjectNames(db, clock, { workspace: ws.slug, subject, names: { de: name } });
      await de(at("product", "tabmaster"), "Tab-Meister <b>&</b>");
      await de(at("plan", "tabmaster", "monthly"), "Monatlich");
      await de(at("product", "suite", "", "bundle"), "Paket");
      await de(at("plan", "suite", "suite-lifetime", "bundle"), "Paket für immer");
      await de(at("feature", "tabmaster", "export"), "Exportieren");
      await de(at("meter", "tabmaster", "summaries"), "Zusammenfassungen");

      const out = new TestBrowser(app);
      const plans = (await out.get(`${base}/plans?lang=de`)).body;
      assert.ok(plans.includes("<h1>Tarife für Tab-Meister &lt;b&gt;&amp;&lt;/b&gt;</h1>"), "the tool's name, escaped");
      assert.doesNotMatch(plans, /<b>&<\/b>/);
      assert.match(plans, />Monatlich<\/h/);
      assert.match(plans, />Lifetime<\/h/, "a plan with no German name keeps its own");
      assert.match(plans, /Paket für immer/);
      assert.match(plans, /<li>Exportieren<\/li>/);
      assert.match(plans, /Zusammenfassungen/);
      assert.doesNotMatch(plans, /Monthly|Summaries/);
      assert.match((await out.get(`${base}/trial?lang=de`)).body, /Tab-Meister &lt;b&gt;/);
      const signIn = (await out.get(`${base}/sign-in?lang=de`)).body;
      assert.match(signIn, /<h1>Bei Tab-Meister &lt;b&gt;&amp;&lt;\/b&gt; anmelden<\/h1>/);
      // Japanese has none of them: every name as the vendor wrote it.
      const ja = (await out.get(`${base}/plans?lang=ja`)).body;
      assert.match(ja, /Tab Master/);
      assert.match(ja, />Monthly<\/h/);
      assert.doesNotMatch(ja, /Tab-Meister|Monatlich|Exportieren/);

      // Stripe Checkout's line item, priced inline, names the bundle and plan as the page did.
      await out.get(`${base}/plans?lang=de`);
      assert.equal((await out.post(`${base}/plans`, { plan: "suite-lifetime", bundle: "suite" })).statusCode, 303);
      assert.equal(stripeApi.calls.at(-1)?.form["line_items[0][price_data][product_data][name]"], "Paket (Paket für immer)");
      assert.equal(stripeApi.calls.at(-1)?.form.locale, "de");

      // The sign-in mail names the tool as the page does; Manage names what was bought.
      const buyer = new TestBrowser(app);
      await signInOnPages(buyer, env.dataDir, base, "emil@example.com", "?lang=de");
      assert.match((await readCodeMail(env.dataDir, "emil@example.com")) ?? "", /Subject: \d{6} ist Ihr Anmeldecode für Tab-Meister <b>&<\/b>\n/);
      const manage = (await buyer.get(`${base}/manage`)).body;
      assert.match(manage, /<html lang="de">/);
      assert.match(manage, /Tab-Meister &lt;b&gt;/);
      assert.doesNotMatch(manage, /Tab Master/);
    });

    test("names in other languages: refused whole (a language Warden does not speak, too long, nothing to name), removed by an empty name", async () => {
      const { env, ws } = await setUp(dialect);
      const { db, clock } = env.services;
      const tool = { kind: "product" as const, productKind: "tool" as const, productId: "tabmaster", itemId: "" };
      await setSubjectNames(db, clock, { workspace: ws.slug, subject: tool, names: { de: "Tab-Meister", ja: "タブマスター" } });
      const cases: [Record<string, string>, { code: string; param: string | undefined }][] = [
        [
          { de: "Neu", xx: "?" },
          { code: "invalid_parameter", param: "language" },
        ],
        [
          { de: "Neu", "en-XA": "?" },
          { code: "invalid_parameter", param: "language" },
        ],
        [
          { de: "Neu", fr: "x".repeat(201) },
          { code: "invalid_parameter", param: "name_fr" },
        ],
      ];
      for (const [names, expected] of cases) {
        await assert.rejects(setSubjectNames(db, clock, { workspace: ws.slug, subject: tool, names }), (error) => {
          assert.deepEqual(refusal(error), expected);
          return true;
        });
      }
      for (const subject of [
        { ...tool, productId: "nothing" },
        { ...tool, kind: "plan" as const, itemId: "nothing" },
        { ...tool, kind: "meter" as const, itemId: "export" },
        { ...tool, kind: "feature" as const, productKind: "bundle" as const, productId: "suite", itemId: "export" },
      ]) {
        await assert.rejects(setSubjectNames(db, clock, { workspace: ws.slug, subject, names: { de: "Neu" } }), (error) => {
          assert.equal(refusal(error) && (error as ApiError).code, "not_found", JSON.stringify(subject));
          return true;
        });
      }
      assert.deepEqual((await readSubjectNames(db, { workspace: ws.slug, subject: tool })).names, { de: "Tab-Meister", ja: "タブマスター" }, "nothing written");
      const cleared = await setSubjectNames(db, clock, { workspace: ws.slug, subject: tool, names: { de: "  " } });
      assert.deepEqual(cleared.names, { ja: "タブマスター" });
      assert.equal(cleared.defaultName, "Tab Master");
    });

    test("a page's names are kept in the process: a name set here shows at once, one set by another process after the feed's next read", async () => {
      const { env, app, ws, base } = await setUp(dialect);
      const { db, clock } = env.services;
      const monthly = { kind: "plan" as const, productKind: "tool" as const, productId: "tabmaster", itemId: "monthly" };
      const planNames = async () =>
        [...(await new TestBrowser(app).get(`${base}/plans?lang=de`)).body.matchAll(/<h2 class="offer-name"[^>]*>([^<]*)</g)].map((m) => m[1]);
      await env.services.accessWatch.poll();
      assert.ok((await planNames()).includes("Monthly"), "no German name: the default");
      // Renamed through the use case in this process: the very next page shows it, kept or not.
      await setSubjectNames(db, clock, { workspace: ws.slug, subject: monthly, names: { de: "Monatlich" } });
      assert.ok((await planNames()).includes("Monatlich"));
      await env.services.accessWatch.poll();
      assert.ok((await planNames()).includes("Monatlich"), "read again and kept once the feed shows the change");
      // As another process renames it: the row and the feed's row for everyone, with no word to this process's cache.
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable("translated_names")
          .set({ name: "Pro Monat" })
          .where("workspace_id", "=", ws.workspaceId)
          .where("item_id", "=", "monthly")
          .execute();
        await trx.insertInto("access_changes").values({ workspace_id: ws.workspaceId, env: "live", person_id: "*", changed_at: clock.now() }).execute();
      });
      assert.ok((await planNames()).includes("Monatlich"), "kept until the feed is read (within a second in a server)");
      await env.services.accessWatch.poll();
      const renamed = await planNames();
      assert.ok(renamed.includes("Pro Monat"), renamed.join(", "));
      assert.ok(!renamed.includes("Monatlich"));
      // Removed here: the default again at once; an English page never shows it.
      await setSubjectNames(db, clock, { workspace: ws.slug, subject: monthly, names: { de: "" } });
      assert.ok((await planNames()).includes("Monthly"));
      assert.doesNotMatch((await new TestBrowser(app).get(`${base}/plans?lang=en`)).body, /Pro Monat|Monatlich/);
    });

    test("refusals a page shows speak its language: a plan not on sale, no trial, in German and Japanese", async () => {
      const { env, app, ws, base } = await setUp(dialect);
      const buyer = new TestBrowser(app);
      await signInOnPages(buyer, env.dataDir, base, "fritz@example.com", "?lang=de");
      // A plan not on sale, posted anyway.
      await buyer.get(`${base}/plans`);
      const plan = await buyer.post(`${base}/plans`, { plan: "nope" });
      assert.equal(plan.statusCode, 400);
      assert.match(plan.body, /Der Tarif „nope“ wird für Tab Master nicht angeboten\./);
      assert.doesNotMatch(plan.body, /No plan "nope"/);
      // No trial (the tool's trial set to none after the page was shown).
      await buyer.get(`${base}/trial`);
      await updateTool(env.services.db, env.clock, { workspace: ws.slug, id: "tabmaster", trialDays: "0" });
      const trial = await buyer.post(`${base}/trial`, {});
      assert.equal(trial.statusCode, 400);
      assert.match(trial.body, /Tab Master bietet keine kostenlose Testversion an\./);
      // Japanese, the same refusal.
      await buyer.get(`${base}/trial?lang=ja`);
      assert.match((await buyer.post(`${base}/trial`, {})).body, /Tab Master には無料トライアルがありません。/);
      // A purchase of nobody's is a 404 page, in the page's language too.
      await buyer.get(`${base}/manage?lang=de`);
      const notYours = await buyer.post(`${base}/manage/teams/lic_nothing/seats`, { email: "x@example.com" });
      assert.equal(notYours.statusCode, 404);
      assert.match(notYours.body, /<html lang="de">/);
    });

    test("a refusal's words: its reason's message with its facts in the page's format; without a reason, the API's message", () => {
      const german = pageText(messagesFor("de"));
      const names = { workspace: "Acme", tool: "Tab Master" };
      const full = invalidParameter("team", "lic_x has 3 seats, all in use; unassign one first.", { reason: "seats_full", facts: { seats: 3 } });
      assert.equal(refusalWords(german, full, names), "Alle 3 Plätze sind vergeben. Nehmen Sie zuerst einen zurück.");
      const one = invalidParameter("team", "lic_x has 1 seat, all in use; unassign one first.", { reason: "seats_full", facts: { seats: 1 } });
      assert.equal(refusalWords(pageText(messagesFor("en")), one, names), "Its 1 seat is in use. Take one back first.");
      const ended = invalidParameter("id", "Subscription sub_x ended at 2026-11-21T12:00:00.000Z.", {
        reason: "subscription_ended",
        facts: { at: Date.UTC(2026, 10, 21, 12) },
      });
      assert.equal(refusalWords(german, ended, names), "Dieses Abonnement endete am 21. Nov. 2026, 12:00 UTC: Es gibt nichts mehr zu ändern.");
      assert.equal(refusalWords(german, invalidParameter("x", "Plain English words."), names), "Plain English words.", "no reason: the API's message");
      assert.equal(refusalWords(german, new ApiError("not_found", "No such thing."), names), null, "a 404 is an error page, not a refusal on the page");
      assert.equal(refusalWords(german, new Error("bug"), names), null);
    });

    test("the client API's sign-in mails the code in the language the extension asks for", async () => {
      const { env, app, ws } = await setUp(dialect);
      const signIn = (email: string, lang?: string) =>
        app.inject({
          method: "POST",
          url: "/api/client/v1/sign-in",
          payload: { workspace: ws.slug, tool: ws.tool, env: "test", email, ...(lang === undefined ? {} : { lang }) },
        });
      assert.equal((await signIn("anna@example.com", "de-AT")).statusCode, 200);
      assert.match((await readCodeMail(env.dataDir, "anna@example.com")) ?? "", /Subject: \d{6} ist Ihr Anmeldecode für Tab Master\n/);
      assert.equal((await signIn("aiko@example.com", "ja")).statusCode, 200);
      assert.match((await readCodeMail(env.dataDir, "aiko@example.com")) ?? "", /Subject: \d{6} は Tab Master のサインインコードです\n/);
      assert.equal((await signIn("bob@example.com")).statusCode, 200);
      assert.match((await readCodeMail(env.dataDir, "bob@example.com")) ?? "", /Subject: \d{6} is your Tab Master sign-in code\n/);
      // Traditional Chinese is not spoken: the workspace's default, else English.
      await updateBranding(env.services, { workspace: ws.slug, language: "de" });
      assert.equal((await signIn("chen@example.com", "zh-TW")).statusCode, 200);
      assert.match((await readCodeMail(env.dataDir, "chen@example.com")) ?? "", /ist Ihr Anmeldecode/);
      // The vendor's German name of the tool, in the German mail.
      await setSubjectNames(env.services.db, env.clock, {
        workspace: ws.slug,
        subject: { kind: "product", productKind: "tool", productId: ws.tool, itemId: "" },
        names: { de: "Tab-Meister" },
      });
      assert.equal((await signIn("dirk@example.com", "de")).statusCode, 200);
      assert.match((await readCodeMail(env.dataDir, "dirk@example.com")) ?? "", /Anmeldecode für Tab-Meister/);
      // Not a language tag: refused by the contract, no mail.
      for (const wrong of ["<script>", "", "d", "de AT", "x".repeat(40)]) {
        const refused = await signIn("eve@example.com", wrong);
        assert.equal(refused.statusCode, 400, wrong);
        assert.equal(refused.json().error.param, "lang", wrong);
      }
      assert.equal(await readCodeMail(env.dataDir, "eve@example.com"), null);
    });
  });
}
