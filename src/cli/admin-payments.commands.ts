// `warden admin stripe|paddle|licence|subscription|dispute|seats …`: Stripe connected,
// reconciled and disconnected, Paddle connected, reconciled and disconnected, and the vendor's own actions on what was bought.

import type { ReconcileResult } from "../stripe/stripe-reconcile.service.js";
import { CliError, type Command, optStr, str } from "./command.js";
import { isoOrNull, listText, minute } from "./table.js";

const reconcileJson = (r: ReconcileResult) => ({
  id: r.id,
  workspace: r.workspace,
  env: r.env,
  dry_run: r.dryRun,
  since: isoOrNull(r.since),
  status: r.status,
  scanned: r.scanned,
  applied: r.applied,
  unmapped: r.unmapped,
  started_at: isoOrNull(r.startedAt),
  finished_at: isoOrNull(r.finishedAt),
  changes: r.report.changes,
  unmapped_purchases: r.report.unmapped,
  skipped: r.report.skipped,
});

function reconcileText(r: ReconcileResult): string {
  const would = r.dryRun ? "would apply" : "applied";
  const lines = [
    `Read ${r.scanned} Stripe objects of ${r.workspace} (${r.env}): ${would} ${r.applied}, ${r.unmapped} purchase${r.unmapped === 1 ? "" : "s"} mapped to no plan.`,
  ];
  for (const c of r.report.changes) {
    const what = [...c.events.map((e) => e.type), ...(c.note ? [c.note] : [])].join(", ");
    lines.push(`  ${c.kind} ${c.object}: ${what}`);
  }
  if (r.report.unmapped.length > 0) {
    lines.push("Mapped to no plan (link its price: warden admin plan update … --stripe-price price_…):");
    for (const u of r.report.unmapped) lines.push(`  ${u.kind} ${u.object} by ${u.email ?? "an unknown buyer"}: ${u.reason}`);
  }
  for (const s of r.report.skipped) lines.push(`Skipped ${s.kind} ${s.object}: ${s.reason}`);
  if (r.dryRun) lines.push("Dry run: nothing was changed.");
  return lines.join("\n");
}

export const paymentCommands: Record<string, Command> = {
  "admin paddle connect": {
    summary: "Connect a workspace's environment to Paddle Billing (its notification destination's secret key, optionally an API key).",
    usage: "warden admin paddle connect --workspace S --env test|live --webhook-secret pdl_ntfset_… [--api-key pdl_sdbx_apikey_…]",
    options: { workspace: { type: "string" }, env: { type: "string" }, "webhook-secret": { type: "string" }, "api-key": { type: "string" } },
    required: ["workspace", "env", "webhook-secret"],
    async run({ values: v, services }) {
      const { connectPaddle } = await import("../paddle/paddle-account.service.js");
      const connection = await connectPaddle(await services(), {
        workspace: str(v, "workspace"),
        env: str(v, "env"),
        webhookSecret: str(v, "webhook-secret"),
        apiKey: optStr(v, "api-key"),
      });
      const webhookUrl = `${(await services()).config.publicUrl}${connection.webhook_path}`;
      return {
        json: { ...connection, webhook_url: webhookUrl },
        text: `Connected ${connection.workspace} (${connection.env}) to Paddle. Point a Paddle notification destination at ${webhookUrl}.`,
      };
    },
  },
  "admin paddle status": {
    summary: "Show a workspace environment's Paddle connection (secrets by their last four only) and the last Paddle event received.",
    usage: "warden admin paddle status --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { paddleStatus } = await import("../paddle/paddle-account.service.js");
      const status = await paddleStatus(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const { connection: c, lastEvent: e } = status;
      const json = {
        workspace: status.workspace,
        env: status.env,
        webhook_path: status.webhookPath,
        connected: c !== null,
        webhook_secret: c ? `pdl_ntfset_…${c.webhookSecretLastFour}` : null,
        api_key: c?.apiKeyLastFour ? `pdl_…${c.apiKeyLastFour}` : null,
        last_event: e ? { id: e.id, type: e.type, received_at: isoOrNull(e.receivedAt), outcome: e.outcome, reason: e.reason } : null,
      };
      const text = [
        c
          ? `${status.workspace} (${status.env}) is connected to Paddle at ${status.webhookPath}.`
          : `${status.workspace} (${status.env}) is not connected to Paddle.`,
        ...(c ? [`Secret key: ${json.webhook_secret}`, `API key: ${json.api_key ?? "none"}`] : []),
        e ? `Last event: ${e.type} ${e.id} at ${minute(e.receivedAt)}, ${e.outcome}${e.reason ? ` (${e.reason})` : ""}.` : "No Paddle event received yet.",
      ].join("\n");
      return { json, text };
    },
  },
  "admin paddle disconnect": {
    summary: "Disconnect a workspace environment from Paddle: its secrets are forgotten and Paddle's notifications refused.",
    usage: "warden admin paddle disconnect --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { disconnectPaddle } = await import("../paddle/paddle-account.service.js");
      const result = await disconnectPaddle(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const text = result.disconnected
        ? `Disconnected ${str(v, "workspace")} (${str(v, "env")}) from Paddle.`
        : `${str(v, "workspace")} (${str(v, "env")}) was not connected to Paddle.`;
      return { json: result, text };
    },
  },
  "admin paddle reconcile": {
    summary: "Apply what Paddle's notifications missed: its subscriptions, completed transactions and adjustments, read from Paddle's API (needs the API key).",
    usage: "warden admin paddle reconcile --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { reconcilePaddle } = await import("../paddle/paddle-reconcile.service.js");
      const r = await reconcilePaddle(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const text = [
        `Reconciled ${r.workspace} (${r.env}) with Paddle: read ${r.read.subscription} subscriptions, ${r.read.transaction} completed transactions, ${r.read.adjustment} adjustments; ${r.applied} applied (what was applied before changes nothing).`,
        ...r.ignored.map((i) => `Not taken: ${i.kind} ${i.id}: ${i.reason}`),
      ].join("\n");
      return { json: r, text };
    },
  },
  "admin stripe connect": {
    summary: "Connect a workspace's environment to Stripe (its webhook secret, optionally its secret key).",
    usage: "warden admin stripe connect --workspace S --env test|live --webhook-secret whsec_… [--secret-key sk_…]",
    options: { workspace: { type: "string" }, env: { type: "string" }, "webhook-secret": { type: "string" }, "secret-key": { type: "string" } },
    required: ["workspace", "env", "webhook-secret"],
    async run({ values: v, services }) {
      const { connectStripe } = await import("../stripe/stripe-account.service.js");
      const connection = await connectStripe(await services(), {
        workspace: str(v, "workspace"),
        env: str(v, "env"),
        webhookSecret: str(v, "webhook-secret"),
        secretKey: optStr(v, "secret-key"),
      });
      // The address people reach this Warden at (WARDEN_PUBLIC_URL), as the dashboard's Stripe page shows it.
      const webhookUrl = `${(await services()).config.publicUrl}${connection.webhook_path}`;
      return {
        json: { ...connection, webhook_url: webhookUrl },
        text: `Connected ${connection.workspace} (${connection.env}) to Stripe. Point a Stripe webhook endpoint at ${webhookUrl}.`,
      };
    },
  },
  "admin stripe status": {
    summary: "Show a workspace environment's Stripe connection (secrets by their last four only) and the last Stripe event received.",
    usage: "warden admin stripe status --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { stripeStatus } = await import("../stripe/stripe-account.service.js");
      const status = await stripeStatus(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const { connection: c, lastEvent: e } = status;
      const json = {
        workspace: status.workspace,
        env: status.env,
        webhook_path: status.webhookPath,
        connected: c !== null,
        webhook_secret: c ? `whsec_…${c.webhookSecretLastFour}` : null,
        secret_key: c?.secretKey ? `${c.secretKey.prefix}_…${c.secretKey.lastFour}` : null,
        last_event: e ? { id: e.id, type: e.type, received_at: isoOrNull(e.receivedAt), outcome: e.outcome, reason: e.reason } : null,
      };
      const text = [
        c
          ? `${status.workspace} (${status.env}) is connected to Stripe at ${status.webhookPath}.`
          : `${status.workspace} (${status.env}) is not connected to Stripe.`,
        ...(c ? [`Signing secret: ${json.webhook_secret}`, `Secret key: ${json.secret_key ?? "none"}`] : []),
        e ? `Last event: ${e.type} ${e.id} at ${minute(e.receivedAt)}, ${e.outcome}${e.reason ? ` (${e.reason})` : ""}.` : "No Stripe event received yet.",
      ].join("\n");
      return { json, text };
    },
  },
  "admin stripe reconcile": {
    summary: "Read the Stripe account and apply what Warden lacks (purchases, renewals, refunds, disputes webhooks missed), once each.",
    usage: "warden admin stripe reconcile --workspace S --env test|live [--since 2026-01-31] [--dry-run]",
    options: { workspace: { type: "string" }, env: { type: "string" }, since: { type: "string" }, "dry-run": { type: "boolean" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { reconcileStripe } = await import("../stripe/stripe-reconcile.service.js");
      const result = await reconcileStripe(await services(), {
        workspace: str(v, "workspace"),
        env: str(v, "env"),
        since: optStr(v, "since"),
        dryRun: v["dry-run"] === true,
        trigger: "cli",
      });
      return { json: reconcileJson(result), text: reconcileText(result) };
    },
  },
  "admin stripe disconnect": {
    summary: "Disconnect a workspace environment from Stripe: its secrets are forgotten and Stripe's deliveries refused.",
    usage: "warden admin stripe disconnect --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { disconnectStripe } = await import("../stripe/stripe-account.service.js");
      const result = await disconnectStripe(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const text = result.disconnected
        ? `Disconnected ${str(v, "workspace")} (${str(v, "env")}) from Stripe.`
        : `${str(v, "workspace")} (${str(v, "env")}) was not connected to Stripe.`;
      return { json: result, text };
    },
  },
  "admin stripe trigger purchase": {
    summary:
      "Send Warden's own Stripe webhook a signed test purchase of a one-time plan, as Stripe would (test environment only; warden serve must be running).",
    usage: "warden admin stripe trigger purchase --workspace S (--tool TOOL | --bundle B) --plan PLAN --email E   (test environment only)",
    options: { workspace: { type: "string" }, tool: { type: "string" }, bundle: { type: "string" }, plan: { type: "string" }, email: { type: "string" } },
    required: ["workspace", "plan", "email"],
    async run({ values: v, services }) {
      const { testPurchase, testPurchaseLicence } = await import("../stripe/stripe-trigger.service.js");
      const tool = optStr(v, "tool");
      const bundle = optStr(v, "bundle");
      if ((tool === undefined) === (bundle === undefined)) throw new CliError("invalid_request_error", "Give --tool or --bundle (one of them).", "tool");
      const workspace = str(v, "workspace");
      const purchase = await testPurchase(await services(), {
        workspace,
        env: "test",
        email: str(v, "email"),
        product: tool !== undefined ? { kind: "tool", id: tool } : { kind: "bundle", id: bundle as string },
        plan: str(v, "plan"),
      });
      let status: number;
      let answer: { outcome?: string; error?: { message?: string } };
      try {
        const response = await fetch(purchase.url, {
          method: "POST",
          headers: { "content-type": "application/json", "stripe-signature": purchase.signature },
          body: purchase.body,
          signal: AbortSignal.timeout(15_000),
        });
        status = response.status;
        answer = (await response.json().catch(() => ({}))) as typeof answer;
      } catch (error) {
        throw new CliError(
          "api_error",
          `Could not reach Warden at ${purchase.url} (${(error as Error).message}): is warden serve running, and is WARDEN_PUBLIC_URL its address?`,
        );
      }
      if (status !== 200) throw new CliError("api_error", `Warden answered ${status} to the test purchase: ${answer.error?.message ?? "no reason given"}`);
      const licence = await testPurchaseLicence(await services(), { workspace, checkoutSession: purchase.checkoutSession });
      const json = { event: purchase.event, checkout_session: purchase.checkoutSession, url: purchase.url, outcome: answer.outcome ?? null, licence };
      const text = licence
        ? `Sent ${purchase.event} (checkout.session.completed) to ${purchase.url}: ${answer.outcome}.\nLicence ${licence.id} (${licence.status}) for ${licence.email}, customer ${licence.person}.`
        : `Sent ${purchase.event} (checkout.session.completed) to ${purchase.url}: ${answer.outcome}, and no licence was made; warden admin stripe status says why.`;
      return { json, text, exitCode: licence ? 0 : 1 };
    },
  },
  "admin licence list": {
    summary: "List a workspace environment's licences, newest first (100 at most), with the ids refunds and disputes take.",
    usage: "warden admin licence list --workspace S --env test|live [--email E] [--tool TOOL]",
    options: { workspace: { type: "string" }, env: { type: "string" }, email: { type: "string" }, tool: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { listLicencesByCommand } = await import("../billing/licence.service.js");
      const licences = await listLicencesByCommand(await services(), {
        workspace: str(v, "workspace"),
        env: str(v, "env"),
        email: optStr(v, "email"),
        tool: optStr(v, "tool"),
      });
      const product = (l: (typeof licences)[number]) => (l.tool !== null ? l.tool : `bundle ${l.bundle}`);
      return {
        json: licences,
        text: listText(
          "No licences.",
          ["ID", "EMAIL", "PRODUCT", "PLAN", "STATUS", "PURCHASED"],
          licences.map((l) => [
            l.id,
            l.email,
            product(l),
            l.plan ?? "-",
            l.seats ? `${l.status} (team, ${l.seats} seats)` : l.status,
            minute(Date.parse(l.purchased_at)),
          ]),
        ),
      };
    },
  },
  "admin licence refund": {
    summary: "Refund a licence: revoke it and send payment.refunded.",
    usage: "warden admin licence refund --id LIC",
    options: { id: { type: "string" } },
    required: ["id"],
    async run({ values: v, services }) {
      const { refundLicence } = await import("../billing/licence.service.js");
      const result = await refundLicence(await services(), { id: str(v, "id") });
      const text = result.refunded_now
        ? `Refunded ${result.id}: revoked, payment.refunded sent.`
        : `${result.id} was refunded already (${result.refunded_at}).`;
      return { json: result, text };
    },
  },
  "admin subscription cancel": {
    summary: "Cancel a subscription at the end of its period, or --now.",
    usage: "warden admin subscription cancel --id SUB [--now] [--workspace S --env test|live]",
    options: { id: { type: "string" }, now: { type: "boolean" }, workspace: { type: "string" }, env: { type: "string" } },
    required: ["id"],
    async run({ values: v, services }) {
      const { cancelSubscription } = await import("../billing/subscription.service.js");
      const result = await cancelSubscription(await services(), {
        id: str(v, "id"),
        now: v.now === true,
        workspace: optStr(v, "workspace"),
        env: optStr(v, "env"),
      });
      const text = result.ended ? `Ended ${result.id} at ${result.ends_at}.` : `${result.id} is set to end at ${result.ends_at}.`;
      return { json: result, text };
    },
  },
  "admin dispute open": {
    summary: "Open a test dispute on a licence (test environment only).",
    usage: "warden admin dispute open --licence LIC   (test environment only)",
    options: { licence: { type: "string" } },
    required: ["licence"],
    async run({ values: v, services }) {
      const { openTestDispute } = await import("../billing/dispute.service.js");
      const dispute = await openTestDispute(await services(), { licence: str(v, "licence") });
      return { json: dispute, text: `Opened dispute ${dispute.id} on ${dispute.licence}: the licence is suspended.` };
    },
  },
  "admin dispute close": {
    summary: "Close a test dispute as won, lost or warning_closed (test environment only).",
    usage: "warden admin dispute close --id D --status won|lost|warning_closed   (test environment only)",
    options: { id: { type: "string" }, status: { type: "string" } },
    required: ["id", "status"],
    async run({ values: v, services }) {
      const { closeTestDispute } = await import("../billing/dispute.service.js");
      const dispute = await closeTestDispute(await services(), { id: str(v, "id"), status: str(v, "status") });
      return { json: dispute, text: `Closed dispute ${dispute.id}: ${dispute.status}.` };
    },
  },
  "admin seats assign": {
    summary: "Give a seat of a team licence or subscription to a person.",
    usage: "warden admin seats assign --team LIC|SUB --email E [--workspace S --env test|live]",
    options: { team: { type: "string" }, email: { type: "string" }, workspace: { type: "string" }, env: { type: "string" } },
    required: ["team", "email"],
    async run({ values: v, services }) {
      const { assignSeat } = await import("../billing/seat.service.js");
      const seat = await assignSeat(await services(), {
        team: str(v, "team"),
        email: str(v, "email"),
        workspace: optStr(v, "workspace"),
        env: optStr(v, "env"),
      });
      return { json: seat, text: `${seat.email} holds seat ${seat.seat} of ${seat.team} (${seat.seats_in_use} of ${seat.seats} in use).` };
    },
  },
  "admin seats unassign": {
    summary: "Take a seat back from a person.",
    usage: "warden admin seats unassign --team LIC|SUB --email E [--workspace S --env test|live]",
    options: { team: { type: "string" }, email: { type: "string" }, workspace: { type: "string" }, env: { type: "string" } },
    required: ["team", "email"],
    async run({ values: v, services }) {
      const { unassignSeat } = await import("../billing/seat.service.js");
      const seat = await unassignSeat(await services(), {
        team: str(v, "team"),
        email: str(v, "email"),
        workspace: optStr(v, "workspace"),
        env: optStr(v, "env"),
      });
      return { json: seat, text: `Took back seat ${seat.seat} from ${seat.email} (${seat.seats_in_use} of ${seat.seats} in use).` };
    },
  },
};
