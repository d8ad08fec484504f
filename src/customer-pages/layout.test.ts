// A page's words as kept per locale (layout.ts's PageText, i18n/messages.ts): a message's
// output is kept by its plain values, so the same values give the same words from memory
// and any other values (another type, another split between arguments, markup or a tag's
// function) their own; dates kept by the minute, prices by amount. Pure: no database.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { html } from "../dashboard/shared/html.js";
import { messagesFor } from "../i18n/messages.js";
import { linkTo, pageText } from "./layout.js";

describe("a page's words, kept per locale", () => {
  test("the same plain values give the same markup, kept; other values their own", () => {
    const { t, s } = pageText(messagesFor("en"));
    const year = t("plans.price", { price: "€5.00", interval: "year" });
    assert.equal(year.markup, '<span class="offer-amount">€5.00</span> <span class="offer-per">a year</span>');
    assert.equal(t("plans.price", { price: "€5.00", interval: "year" }), year, "kept: the very same markup");
    assert.equal(t("plans.price", { price: "€5.00", interval: "once" }).markup, '<span class="offer-amount">€5.00</span> <span class="offer-per">once</span>');
    assert.equal(t("plans.creditsExpire", { days: 1 }).markup, "Credits last 1 day from purchase.");
    assert.equal(t("plans.creditsExpire", { days: 2 }).markup, "Credits last 2 days from purchase.");
    assert.equal(s("plans.title", { tool: "Tab Master" }), "Tab Master plans");
    assert.equal(s("plans.title", { tool: "Link Keeper" }), "Link Keeper plans");
    assert.equal(t("shell.plans").markup, "Plans");
    const german = pageText(messagesFor("de"));
    assert.equal(german.s("plans.title", { tool: "Tab Master" }), "Tarife für Tab Master", "each locale keeps its own");
  });

  test("values that would spell one another's key are told apart; kept markup stays escaped", () => {
    const { t } = pageText(messagesFor("en"));
    const first = t("plans.bundlePlan", { bundle: "a\u0000plan\u0001sb", plan: "c" }).markup;
    const second = t("plans.bundlePlan", { bundle: "a", plan: "b\u0000plan\u0001sc" }).markup;
    assert.equal(first, "a\u0000plan\u0001sb: c");
    assert.equal(second, "a: b\u0000plan\u0001sc");
    for (let i = 0; i < 2; i++) assert.equal(t("plans.bundlePlan", { bundle: "<b>", plan: "&" }).markup, "&lt;b&gt;: &amp;");
    assert.equal(t("plans.signedInAs", { email: "<i>@example.com" }).markup.includes("<strong>&lt;i&gt;@example.com</strong>"), true);
  });

  test("a message given a tag's function or markup is made each time: each link its own address, markup kept", () => {
    const { t } = pageText(messagesFor("en"));
    const to = (href: string) => t("plans.signInFirst", { tool: "Tab Master", processor: "Stripe", link: linkTo(href) }).markup;
    assert.match(to("/a"), /<a href="\/a">Sign in<\/a>/);
    assert.match(to("/b"), /<a href="\/b">Sign in<\/a>/);
    // Markup given to a message without tags is kept as markup, not escaped (a date's <time>).
    assert.equal(t("plans.bundlePlan", { bundle: html`<em>x</em>`, plan: "<y>" }).markup, "<em>x</em>: &lt;y&gt;");
  });

  test("dates are the same words within a minute and change with it; prices by amount and currency; the pseudo-locale marks both", () => {
    const english = messagesFor("en");
    const noon = Date.UTC(2026, 10, 21, 12, 0, 0);
    assert.equal(english.dateTime(noon), english.dateTime(noon + 59_999));
    assert.notEqual(english.dateTime(noon), english.dateTime(noon + 60_000));
    assert.match(english.dateTime(noon + 60_000), /12:01/);
    assert.equal(messagesFor("de").dateTime(noon), "21. Nov. 2026, 12:00 UTC");
    assert.equal(messagesFor("de").money(123456, "eur"), "1.234,56\u00a0€");
    assert.equal(messagesFor("de").money(123456, "usd"), "1.234,56\u00a0$");
    assert.equal(messagesFor("de").money(100, "eur"), "1,00\u00a0€");
    assert.equal(messagesFor("en-XA").dateTime(noon), `⟪${english.dateTime(noon)}⟫`);
  });
});
