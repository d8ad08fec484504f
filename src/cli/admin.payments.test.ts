// The payment commands end to end, as an operator runs them: `warden admin stripe
// connect`, Stripe's signed events over a real socket to `warden serve`, then the
// vendor's refund, test dispute, seat and cancellation commands, with the API's answers
// and the event log read back over HTTP, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { createServices } from "../services.js";
import { runWarden, seedThroughCli, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv } from "../test-support/harness.js";
import { startWarden } from "../test-support/serve.js";
import { chargeObject, paymentSession, stripeEvent, stripeId, subscriptionObject, subscriptionSession } from "../test-support/stripe.js";

const DAY_MS = 86_400_000;

/** An owner, the Pro workspace Acme and its tool `tabs`, made with `warden admin` on a database of its own. */
async function acmeWithTabs(dialect: (typeof DIALECTS)[number]) {
  const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: "payments-cli-test-key-0123456789abcdef" };
  const { slug } = await seedThroughCli(env, "Acme", { id: "tabs", name: "Tabs" });
  return { env, slug };
}

for (const dialect of DIALECTS) {
  describe(`warden admin payment commands (${dialect})`, () => {
    test("connect Stripe, take its events over HTTP, refund, dispute, hand out seats and cancel from the command line", async () => {
      const { env, slug } = await acmeWithTabs(dialect);
      await wardenJson(
        env,
        "admin",
        "plan",
        "create",
        "--workspace",
        slug,
        "--tool",
        "tabs",
        "--id",
        "life",
        "--name",
        "Life",
        "--billing",
        "one_time",
        "--amount-cents",
        "2900",
      );
      await wardenJson(
        env,
        "admin",
        "plan",
        "create",
        "--workspace",
        slug,
        "--tool",
        "tabs",
        "--id",
        "monthly",
        "--name",
        "Monthly",
        "--billing",
        "subscription",
        "--amount-cents",
        "500",
        "--interval",
        "month",
        "--default",
      );
      const key = (await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test")).key as string;
      const webhookSecret = "whsec_cliTestSecret0123456789";
      const connected = await wardenJson(env, "admin", "stripe", "connect", "--workspace", slug, "--env", "test", "--webhook-secret", webhookSecret);
      assert.deepEqual(connected, {
        workspace: slug,
        env: "test",
        webhook_path: `/processor/stripe/${slug}`,
        secret_key: false,
        webhook_url: `http://127.0.0.1:8080/processor/stripe/${slug}`,
      });
      const badSecret = await runWarden(env, "admin", "stripe", "connect", "--workspace", slug, "--env", "test", "--webhook-secret", "nope");
      assert.equal(badSecret.code, 1);
      assert.match(badSecret.stderr, /whsec_/);

      const warden = await startWarden(env);
      const now = Date.now();
      const stripe = async (type: string, object: Record<string, unknown>) => {
        const payload = JSON.stringify(stripeEvent(type, object, { now: Date.now() }));
        const response = await fetch(`${warden.baseUrl}/processor/stripe/${slug}`, {
          method: "POST",
          headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }) },
          body: payload,
        });
        assert.equal(response.status, 200, await response.clone().text());
        return (await response.json()) as { outcome: string };
      };
      const api = async (path: string) => {
        const response = await fetch(`${warden.baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> & { data: Record<string, unknown>[] } };
      };
      // What the CLI changes, another process, reaches the server's answers from memory
      // within a second (the access-change feed): read until it shows.
      const seenSoon = async (email: string, field: "entitled" | "via", expected: unknown) => {
        // A bound for a busy machine only: the loop ends as soon as the answer is seen.
        const deadline = Date.now() + 60_000;
        for (;;) {
          const seen = (await api(`/tools/tabs/customers/${encodeURIComponent(email)}`)).body[field];
          if (seen === expected || Date.now() > deadline) return assert.equal(seen, expected, `${email}'s ${field}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const eventTypes = async () => (await api("/webhooks/events?limit=100")).body.data.map((e) => e.type as string).sort();

      // A licence bought through Stripe, then disputed and refunded by the vendor.
      const paymentIntent = stripeId("pi");
      await stripe(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabs", warden_plan: "life" }, paymentIntent, now }),
      );
      assert.equal((await api("/tools/tabs/customers/ada%40example.com")).body.via, "licence");

      const services = await createServices(parseConfig(env), { clock: systemClock });
      const licenceOf = (email: string) =>
        services.db
          .selectFrom("licences")
          .innerJoin("people", "people.id", "licences.person_id")
          .select("licences.id")
          .where("people.email", "=", email)
          .executeTakeFirstOrThrow();
      const licence = (await licenceOf("ada@example.com")).id;

      const opened = await wardenJson<{ id: string; status: string }>(env, "admin", "dispute", "open", "--licence", licence);
      assert.equal(opened.status, "needs_response");
      await seenSoon("ada@example.com", "entitled", false);
      assert.equal((await wardenJson(env, "admin", "dispute", "close", "--id", opened.id, "--status", "warning_closed")).status, "warning_closed");
      await seenSoon("ada@example.com", "entitled", true);
      const badStatus = await runWarden(env, "admin", "dispute", "close", "--id", opened.id, "--status", "maybe");
      assert.equal(badStatus.code, 1);

      const refunded = await wardenJson(env, "admin", "licence", "refund", "--id", licence);
      assert.equal(refunded.refunded_now, true);
      assert.equal((await stripe("charge.refunded", chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 }))).outcome, "applied");
      // The command's refund reaches the server's kept answers through the access-change feed, not at once.
      await seenSoon("ada@example.com", "entitled", false);

      // A team licence and its seats.
      await stripe(
        "checkout.session.completed",
        paymentSession({ email: "it@example.org", metadata: { warden_tool: "tabs", warden_plan: "life", warden_seats: "1" }, now }),
      );
      const team = (await licenceOf("it@example.org")).id;
      const seat = await wardenJson(env, "admin", "seats", "assign", "--team", team, "--email", "alan@example.org");
      assert.deepEqual([seat.seats_in_use, seat.seats], [1, 1]);
      const full = await runWarden(env, "admin", "seats", "assign", "--team", team, "--email", "barbara@example.org");
      assert.equal(full.code, 1);
      assert.match(full.stderr, /all in use/);
      await seenSoon("alan@example.org", "via", "licence");
      assert.equal((await wardenJson(env, "admin", "seats", "unassign", "--team", team, "--email", "alan@example.org")).status, "revoked");
      await seenSoon("alan@example.org", "entitled", false);

      // A subscription, cancelled by the vendor: first at the period's end, then at once.
      const sub = stripeId("sub");
      const metadata = { warden_tool: "tabs" };
      await stripe("checkout.session.completed", subscriptionSession({ email: "linus@example.com", subscription: sub, metadata, now }));
      await stripe(
        "customer.subscription.created",
        subscriptionObject({ id: sub, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
      );
      assert.equal((await api("/tools/tabs/customers/linus%40example.com")).body.via, "subscription");
      const scheduled = await wardenJson(env, "admin", "subscription", "cancel", "--id", sub);
      assert.deepEqual([scheduled.cancel_at_period_end, scheduled.ended], [true, false]);
      const ended = await wardenJson(env, "admin", "subscription", "cancel", "--id", sub, "--now", "--workspace", slug, "--env", "test");
      assert.equal(ended.ended, true);
      await seenSoon("linus@example.com", "entitled", false);
      await services.close();

      assert.deepEqual(await eventTypes(), [
        "dispute.closed",
        "payment.disputed",
        "payment.refunded",
        "purchase.completed",
        "purchase.completed",
        "purchase.completed",
        "subscription.cancelled",
        "subscription.cancelled",
        "subscription.started",
      ]);
      const [started] = (await api("/webhooks/events?type=subscription.started")).body.data;
      assert.equal((started?.data as { plan?: string } | undefined)?.plan, "monthly");

      // The connection as the dashboard's Stripe page shows it, then disconnected: Stripe's next delivery is refused.
      const status = await wardenJson<{
        connected: boolean;
        webhook_secret: string;
        secret_key: string | null;
        last_event: { type: string; outcome: string } | null;
      }>(env, "admin", "stripe", "status", "--workspace", slug, "--env", "test");
      assert.deepEqual(
        [status.connected, status.webhook_secret, status.secret_key, status.last_event?.type, status.last_event?.outcome],
        [true, "whsec_…6789", null, "customer.subscription.created", "applied"],
      );
      assert.ok(!JSON.stringify(status).includes(webhookSecret), "never the secret in full");
      assert.deepEqual(await wardenJson(env, "admin", "stripe", "disconnect", "--workspace", slug, "--env", "test"), { disconnected: true });
      const payload = JSON.stringify(stripeEvent("charge.refunded", chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 }), { now: Date.now() }));
      const refused = await fetch(`${warden.baseUrl}/processor/stripe/${slug}`, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }) },
        body: payload,
      });
      assert.equal(refused.status, 400);
      assert.deepEqual(await wardenJson(env, "admin", "stripe", "disconnect", "--workspace", slug, "--env", "test"), { disconnected: false });
      assert.match(
        (await runWarden(env, "admin", "stripe", "status", "--workspace", slug, "--env", "test")).stdout,
        /is not connected to Stripe\.\nLast event: customer\.subscription\.created /,
      );
      await warden.kill();
    });

    test("the README's first sale: connect prints the real webhook URL, trigger purchase buys a licence through it, licence list shows its id", async () => {
      const { env, slug } = await acmeWithTabs(dialect);
      const plan = ["--workspace", slug, "--tool", "tabs", "--billing"];
      await wardenJson(env, "admin", "plan", "create", ...plan, "one_time", "--id", "lifetime", "--name", "Lifetime", "--amount-cents", "4900", "--default");
      await wardenJson(
        env,
        "admin",
        "plan",
        "create",
        ...plan,
        "subscription",
        "--id",
        "monthly",
        "--name",
        "Monthly",
        "--amount-cents",
        "500",
        "--interval",
        "month",
      );
      const key = (await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test")).key as string;
      const trigger = ["admin", "stripe", "trigger", "purchase", "--workspace", slug, "--tool", "tabs"];

      // Not connected yet: refused, saying what to run.
      const early = await runWarden(env, ...trigger, "--plan", "lifetime", "--email", "ada@example.com");
      assert.equal(early.code, 1);
      assert.match(early.stderr, /not connected to Stripe: warden admin stripe connect --workspace /);

      const warden = await startWarden(env);
      const cli = { ...env, WARDEN_PUBLIC_URL: warden.baseUrl };
      const connect = await runWarden(
        cli,
        "admin",
        "stripe",
        "connect",
        "--workspace",
        slug,
        "--env",
        "test",
        "--webhook-secret",
        "whsec_readmeSecret0123456789",
      );
      assert.equal(connect.code, 0, connect.stderr);
      assert.equal(connect.stdout, `Connected ${slug} (test) to Stripe. Point a Stripe webhook endpoint at ${warden.baseUrl}/processor/stripe/${slug}.\n`);
      assert.equal(
        (await wardenJson(cli, "admin", "stripe", "connect", "--workspace", slug, "--env", "test", "--webhook-secret", "whsec_readmeSecret0123456789"))
          .webhook_url,
        `${warden.baseUrl}/processor/stripe/${slug}`,
      );

      const sold = await runWarden(cli, ...trigger, "--plan", "lifetime", "--email", "ada@example.com");
      assert.equal(sold.code, 0, sold.stderr);
      const [, licence, person] = /^Licence (lic_\w+) \(active\) for ada@example\.com, customer (\w+)\.$/m.exec(sold.stdout) ?? [];
      assert.ok(licence && person, sold.stdout);
      assert.match(sold.stdout, new RegExp(`^Sent evt_\\w+ \\(checkout\\.session\\.completed\\) to ${warden.baseUrl}/processor/stripe/${slug}: applied\\.`));

      // What Stripe's report does: the event received, the licence listed, the access check unlocked, purchase.completed written.
      const { last_event: lastEvent } = await wardenJson<{ last_event: { type: string; outcome: string } }>(
        cli,
        "admin",
        "stripe",
        "status",
        "--workspace",
        slug,
        "--env",
        "test",
      );
      assert.deepEqual([lastEvent.type, lastEvent.outcome], ["checkout.session.completed", "applied"]);
      const listed = await wardenJson<Record<string, unknown>[]>(
        cli,
        "admin",
        "licence",
        "list",
        "--workspace",
        slug,
        "--env",
        "test",
        "--email",
        "ADA@example.com",
      );
      assert.deepEqual(
        listed.map((l) => [l.id, l.email, l.tool, l.plan, l.status, l.amount_cents, l.currency]),
        [[licence, "ada@example.com", "tabs", "lifetime", "active", 4900, "eur"]],
      );
      const table = await runWarden(cli, "admin", "licence", "list", "--workspace", slug, "--env", "test", "--tool", "tabs");
      assert.match(table.stdout, new RegExp(`^ID +EMAIL +PRODUCT +PLAN +STATUS +PURCHASED\\n${licence} +ada@example\\.com +tabs +lifetime +active +\\d{4}-`));
      assert.equal(
        (await runWarden(cli, "admin", "licence", "list", "--workspace", slug, "--env", "test", "--email", "nobody@example.com")).stdout,
        "No licences.\n",
      );
      assert.equal((await runWarden(cli, "admin", "licence", "list", "--workspace", slug, "--env", "live")).stdout, "No licences.\n");
      const api = async (path: string) =>
        (await (await fetch(`${warden.baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
      // The server answers from memory, told of the change within a second: read until it shows.
      const deadline = Date.now() + 60_000;
      while ((await api("/tools/tabs/customers/ada%40example.com")).via !== "licence" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal((await api("/tools/tabs/customers/ada%40example.com")).via, "licence");
      assert.deepEqual(
        ((await api("/webhooks/events?limit=10")).data as { type: string }[]).map((e) => e.type),
        ["purchase.completed"],
      );

      // The same licence id refunds it.
      assert.equal((await wardenJson(cli, "admin", "licence", "refund", "--id", licence)).refunded_now, true);

      // Refused: a subscription plan, a live environment (no option for it), a bad address; a server that does not answer.
      const subscription = await runWarden(cli, ...trigger, "--plan", "monthly", "--email", "ada@example.com");
      assert.equal(subscription.code, 1);
      assert.match(subscription.stderr, /Plan monthly is a subscription; a test purchase buys a one-time plan/);
      assert.equal((await runWarden(cli, ...trigger, "--plan", "lifetime", "--email", "ada@example.com", "--env", "live")).code, 2);
      assert.match((await runWarden(cli, ...trigger, "--plan", "lifetime", "--email", "not-an-address")).stderr, /is not an email address/);
      assert.match((await runWarden(cli, ...trigger, "--plan", "nope", "--email", "ada@example.com")).stderr, /No plan "nope" of tool "tabs"/);
      await warden.kill();
      const down = await runWarden(cli, ...trigger, "--plan", "lifetime", "--email", "bob@example.com");
      assert.equal(down.code, 1);
      assert.match(down.stderr, /Could not reach Warden at .*: is warden serve running/);
    });
  });
}
