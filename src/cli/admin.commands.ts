// `warden admin …`: the operator's commands. They work directly on the database named
// by DATABASE_URL (or the SQLite file), with the same use cases as the HTTP API.

import { readFile } from "node:fs/promises";
import { closeTestDispute, openTestDispute } from "../billing/dispute.service.js";
import { refundLicence } from "../billing/licence.service.js";
import { assignSeat, unassignSeat } from "../billing/seat.service.js";
import { cancelSubscription } from "../billing/subscription.service.js";
import { createMailer } from "../client/mailer.js";
import { updateBranding } from "../customer-pages/branding.service.js";
import { invalidParameter } from "../errors/errors.js";
import { ImportInterrupted, type ImportSummary, importFile } from "../import/import.service.js";
import { MailSender } from "../mail/mail.sender.js";
import { backupDatabase } from "../retention/backup.service.js";
import { connectStripe, disconnectStripe, stripeStatus } from "../stripe/stripe-account.service.js";
import { updatePlanStripeLinks } from "../stripe/stripe-plan-link.service.js";
import { type ReconcileResult, reconcileStripe } from "../stripe/stripe-reconcile.service.js";
import { changeBundleTools } from "../workspaces/bundle.service.js";
import {
  createBundle,
  createKey,
  createOwner,
  createPlan,
  createTool,
  createWorkspace,
  listBundles,
  listKeys,
  listOwners,
  listPlans,
  listTools,
  listWorkspaces,
  renamePlan,
  retirePlan,
  revokeKey,
  setOwnerSuspension,
  updateTool,
} from "../workspaces/workspace.service.js";
import type { Plan, Tool } from "../workspaces/workspace.types.js";
import { inviteOwner, listWorkspaceOwners, removeOwner, withdrawInvitation } from "../workspaces/workspace-owners.service.js";
import { type Command, Interrupted, optStr, str } from "./command.js";
import { dashboardBaseUrl, loginLinkCommand } from "./login-link.command.js";
import { importProgressReporter } from "./progress.js";
import { signingKeyCommands } from "./signing-key.commands.js";
import { formatTable, isoOrNull, minute } from "./table.js";

const toolJson = (workspace: string, tool: Tool) => ({ id: tool.id, name: tool.name, workspace, trial_days: tool.trialDays });
const planJson = (plan: Plan) => ({
  id: plan.id,
  [plan.productKind]: plan.productId,
  name: plan.name,
  billing: plan.billing,
  amountCents: plan.amountCents,
  currency: plan.currency,
  interval: plan.interval,
  default: plan.isDefault,
  retired_at: isoOrNull(plan.retiredAt),
});
const price = (plan: Plan) =>
  plan.amountCents === null ? "-" : `${(plan.amountCents / 100).toFixed(2)} ${plan.currency}${plan.interval ? ` a ${plan.interval}` : ""}`;
/** A list's text: the table, or a sentence when there is nothing to show. */
const table = (empty: string, headings: string[], rows: string[][]) => (rows.length === 0 ? empty : formatTable(headings, rows));
const trialText = (tool: Tool) => (tool.trialDays > 0 ? ` (a ${tool.trialDays}-day trial)` : " (no trial)");

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

export const adminCommands: Record<string, Command> = {
  "admin owner list": {
    summary: "List owners, with the workspaces each holds.",
    usage: "warden admin owner list",
    options: {},
    async run({ services }) {
      const owners = await listOwners((await services()).db);
      return {
        json: owners.map((o) => ({
          id: o.id,
          email: o.email,
          suspended_at: isoOrNull(o.suspendedAt),
          workspaces: o.workspaces,
          created_at: isoOrNull(o.createdAt),
        })),
        text: table(
          "No owners.",
          ["ID", "EMAIL", "SUSPENDED", "CREATED", "WORKSPACES"],
          owners.map((o) => [o.id, o.email, o.suspendedAt === null ? "no" : minute(o.suspendedAt), minute(o.createdAt), o.workspaces.join(",") || "-"]),
        ),
      };
    },
  },
  "admin owner create": {
    summary: "Create an owner: the person who holds workspaces and whose quotas they count against.",
    usage: "warden admin owner create --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const owner = await createOwner(db, clock, { email: str(v, "email") });
      return { json: { id: owner.id, email: owner.email }, text: `Created owner ${owner.email} (${owner.id}).` };
    },
  },
  "admin owner suspend": {
    summary: "Suspend an owner: every key of their workspaces answers 401 until lifted.",
    usage: "warden admin owner suspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: true });
      return { json: { id: owner.id, email: owner.email, suspended: true }, text: `Suspended ${owner.email}: every key of their workspaces now answers 401.` };
    },
  },
  "admin owner unsuspend": {
    summary: "Lift an owner's suspension.",
    usage: "warden admin owner unsuspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: false });
      return { json: { id: owner.id, email: owner.email, suspended: false }, text: `Lifted the suspension of ${owner.email}.` };
    },
  },
  "admin login-link": loginLinkCommand,
  ...signingKeyCommands,
  "admin owner invite": {
    summary: "Invite an address to co-own a workspace: it accepts by signing in to the dashboard within 7 days.",
    usage: "warden admin owner invite --workspace S --email E [--base-url https://warden.example.com]",
    options: { workspace: { type: "string" }, email: { type: "string" }, "base-url": { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const all = await services();
      const baseUrl = dashboardBaseUrl(optStr(v, "base-url"), all.config);
      const invitation = await inviteOwner(all, { workspace: str(v, "workspace"), email: str(v, "email"), baseUrl });
      // The mail is the invitation: sent now rather than at the server's next look, and
      // should the relay refuse it, kept for the server to retry. Without SMTP_URL it lands
      // in <data dir>/outbox/, which is all the log would say.
      const mailer = createMailer(all.config, { info: () => {} });
      try {
        await new MailSender(all, mailer, { error: () => {}, warn: () => {} }).drain();
        return {
          json: { id: invitation.id, email: invitation.email, expires_at: isoOrNull(invitation.expiresAt) },
          text: `Invited ${invitation.email} to co-own ${str(v, "workspace")}: they accept by signing in at ${baseUrl}/dashboard before ${minute(invitation.expiresAt)}.`,
        };
      } finally {
        mailer.close();
      }
    },
  },
  "admin owner withdraw": {
    summary: "Withdraw the open invitation of an address to co-own a workspace.",
    usage: "warden admin owner withdraw --workspace S --email E",
    options: { workspace: { type: "string" }, email: { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const result = await withdrawInvitation(await services(), { workspace: str(v, "workspace"), email: str(v, "email") });
      return { json: result, text: result.withdrawn > 0 ? `Withdrew the invitation of ${str(v, "email")}.` : `${str(v, "email")} has no open invitation.` };
    },
  },
  "admin owner remove": {
    summary: "Remove an owner from a workspace (never its last): their dashboard sessions lose it from the next request.",
    usage: "warden admin owner remove --workspace S --email E",
    options: { workspace: { type: "string" }, email: { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const result = await removeOwner(await services(), { workspace: str(v, "workspace"), email: str(v, "email") });
      return {
        json: { email: result.email, owners_left: result.ownersLeft },
        text: `Removed ${result.email} from ${str(v, "workspace")} (${result.ownersLeft} left).`,
      };
    },
  },
  "admin owner invitations": {
    summary: "List a workspace's owners and its open invitations.",
    usage: "warden admin owner invitations --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { owners, invitations } = await listWorkspaceOwners(await services(), { workspace: str(v, "workspace") });
      return {
        json: {
          owners: owners.map((o) => ({ email: o.email, added_at: isoOrNull(o.addedAt), suspended: o.suspendedAt !== null })),
          invitations: invitations.map((i) => ({ email: i.email, created_at: isoOrNull(i.createdAt), expires_at: isoOrNull(i.expiresAt) })),
        },
        text: [
          formatTable(
            ["OWNER", "SINCE"],
            owners.map((o) => [o.email, minute(o.addedAt)]),
          ),
          table(
            "No open invitations.",
            ["INVITED", "EXPIRES"],
            invitations.map((i) => [i.email, minute(i.expiresAt)]),
          ),
        ].join("\n\n"),
      };
    },
  },
  "admin workspace list": {
    summary: "List workspaces, or those of one owner.",
    usage: "warden admin workspace list [--owner E]",
    options: { owner: { type: "string" } },
    async run({ values: v, services }) {
      const workspaces = await listWorkspaces((await services()).db, { ownerEmail: optStr(v, "owner") });
      return {
        json: workspaces.map((w) => ({ id: w.id, slug: w.slug, name: w.name, plan: w.plan, owners: w.owners, created_at: isoOrNull(w.createdAt) })),
        text: table(
          "No workspaces.",
          ["SLUG", "NAME", "PLAN", "CREATED", "ID", "OWNERS"],
          workspaces.map((w) => [w.slug, w.name, w.plan, minute(w.createdAt), w.id, w.owners.join(",")]),
        ),
      };
    },
  },
  "admin workspace create": {
    summary: "Create a workspace held by an owner, on the hobby or pro service plan.",
    usage: "warden admin workspace create --slug S --name N --owner E [--plan hobby|pro]",
    options: { slug: { type: "string" }, name: { type: "string" }, owner: { type: "string" }, plan: { type: "string" } },
    required: ["slug", "name", "owner"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const ws = await createWorkspace(db, clock, { slug: str(v, "slug"), name: str(v, "name"), ownerEmail: str(v, "owner"), plan: optStr(v, "plan") });
      return { json: { id: ws.id, slug: ws.slug, name: ws.name, plan: ws.plan }, text: `Created workspace ${ws.slug} (${ws.plan}).` };
    },
  },
  "admin workspace update": {
    summary: "Set the branding of a workspace's hosted customer pages: an accent colour (white text on it at least 4.5:1) and a PNG, JPEG or WebP logo.",
    usage: 'warden admin workspace update --workspace S [--accent "#1f6f43" | --accent ""] [--logo FILE | --logo ""]',
    options: { workspace: { type: "string" }, accent: { type: "string" }, logo: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const logoPath = optStr(v, "logo");
      const logo =
        logoPath === undefined
          ? undefined
          : logoPath === ""
            ? null
            : await readFile(logoPath).catch(() => {
                throw invalidParameter("logo", `Cannot read the file ${logoPath}.`);
              });
      const brand = await updateBranding(await services(), { workspace: str(v, "workspace"), accent: optStr(v, "accent"), logo });
      return {
        json: { workspace: str(v, "workspace"), accent: brand.accent, logo_type: brand.logoType, version: brand.version },
        text: `Branding of ${str(v, "workspace")}: accent ${brand.accent ?? "none (Warden's blue)"}, logo ${brand.logoType ?? "none"}.`,
      };
    },
  },
  "admin tool list": {
    summary: "List a workspace's tools.",
    usage: "warden admin tool list --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const tools = await listTools((await services()).db, { workspace: str(v, "workspace") });
      return {
        json: tools.map((t) => ({ ...toolJson(str(v, "workspace"), t), created_at: isoOrNull(t.createdAt) })),
        text: table(
          "No tools.",
          ["ID", "TRIAL DAYS", "CREATED", "NAME"],
          tools.map((t) => [t.id, String(t.trialDays), minute(t.createdAt), t.name]),
        ),
      };
    },
  },
  "admin tool create": {
    summary: "Add a tool (a product people get access to) to a workspace.",
    usage: "warden admin tool create --workspace S --id TOOL --name N [--trial-days N]",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" }, "trial-days": { type: "string" } },
    required: ["workspace", "id", "name"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const tool = await createTool(db, clock, { workspace: str(v, "workspace"), id: str(v, "id"), name: str(v, "name"), trialDays: optStr(v, "trial-days") });
      return { json: toolJson(str(v, "workspace"), tool), text: `Created tool ${tool.id}${trialText(tool)}.` };
    },
  },
  "admin tool update": {
    summary: "Rename a tool or change the trial it offers.",
    usage: "warden admin tool update --workspace S --id TOOL [--name N] [--trial-days N]",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" }, "trial-days": { type: "string" } },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const tool = await updateTool(db, clock, {
        workspace: str(v, "workspace"),
        id: str(v, "id"),
        name: optStr(v, "name"),
        trialDays: optStr(v, "trial-days"),
      });
      return { json: toolJson(str(v, "workspace"), tool), text: `Updated tool ${tool.id}${trialText(tool)}.` };
    },
  },
  "admin plan list": {
    summary: "List a workspace's plans, or one tool's or bundle's.",
    usage: "warden admin plan list --workspace S [--tool TOOL | --bundle B]",
    options: { workspace: { type: "string" }, tool: { type: "string" }, bundle: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const plans = await listPlans((await services()).db, { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle") });
      return {
        json: plans.map((p) => ({ ...planJson(p), created_at: isoOrNull(p.createdAt) })),
        text: table(
          "No plans.",
          ["PRODUCT", "ID", "BILLING", "PRICE", "DEFAULT", "RETIRED", "NAME"],
          plans.map((p) => [`${p.productKind} ${p.productId}`, p.id, p.billing, price(p), p.isDefault ? "yes" : "", minute(p.retiredAt), p.name]),
        ),
      };
    },
  },
  "admin plan create": {
    summary: "Add a plan (a price) to a tool or a bundle.",
    usage:
      "warden admin plan create --workspace S (--tool TOOL | --bundle B) --id PLAN --name N --billing one_time|subscription [--amount-cents N] [--currency eur] [--interval month|year] [--default]",
    options: {
      workspace: { type: "string" },
      tool: { type: "string" },
      bundle: { type: "string" },
      id: { type: "string" },
      name: { type: "string" },
      billing: { type: "string" },
      "amount-cents": { type: "string" },
      currency: { type: "string" },
      interval: { type: "string" },
      default: { type: "boolean" },
    },
    required: ["workspace", "id", "name", "billing"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const plan = await createPlan(db, clock, {
        workspace: str(v, "workspace"),
        tool: optStr(v, "tool"),
        bundle: optStr(v, "bundle"),
        id: str(v, "id"),
        name: str(v, "name"),
        billing: str(v, "billing"),
        amountCents: optStr(v, "amount-cents"),
        currency: optStr(v, "currency"),
        interval: optStr(v, "interval"),
        isDefault: v.default === true,
      });
      const json = planJson(plan);
      return { json, text: `Created plan ${plan.id} for ${plan.productKind} ${plan.productId}.` };
    },
  },
  "admin plan rename": {
    summary: "Rename a plan (its id, price and billing never change).",
    usage: "warden admin plan rename --workspace S (--tool TOOL | --bundle B) --id PLAN --name N",
    options: { workspace: { type: "string" }, tool: { type: "string" }, bundle: { type: "string" }, id: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "id", "name"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const plan = await renamePlan(db, clock, {
        workspace: str(v, "workspace"),
        tool: optStr(v, "tool"),
        bundle: optStr(v, "bundle"),
        id: str(v, "id"),
        name: str(v, "name"),
      });
      return { json: planJson(plan), text: `Renamed plan ${plan.id} of ${plan.productKind} ${plan.productId} to "${plan.name}".` };
    },
  },
  "admin plan retire": {
    summary: "Retire a plan: no longer offered at checkout, kept for the licences and subscriptions bought with it.",
    usage: "warden admin plan retire --workspace S (--tool TOOL | --bundle B) --id PLAN",
    options: { workspace: { type: "string" }, tool: { type: "string" }, bundle: { type: "string" }, id: { type: "string" } },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const plan = await retirePlan(db, clock, { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle"), id: str(v, "id") });
      const text = plan.retiredNow
        ? `Retired plan ${plan.id} of ${plan.productKind} ${plan.productId}: checkout no longer offers it; what was bought with it keeps it.`
        : `Plan ${plan.id} of ${plan.productKind} ${plan.productId} was retired already.`;
      return { json: planJson(plan), text };
    },
  },
  "admin plan update": {
    summary: "Link a plan to a Stripe Price or Product, so a purchase without Warden's metadata (ExtensionPay, a payment link) is mapped to it.",
    usage:
      "warden admin plan update --workspace S (--tool TOOL | --bundle B) --id PLAN [--stripe-price price_…] [--stripe-product prod_…] [--unlink-stripe price_…|prod_…]",
    options: {
      workspace: { type: "string" },
      tool: { type: "string" },
      bundle: { type: "string" },
      id: { type: "string" },
      "stripe-price": { type: "string" },
      "stripe-product": { type: "string" },
      "unlink-stripe": { type: "string" },
    },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const one = (name: string) => (optStr(v, name) === undefined ? [] : [str(v, name)]);
      const { plan, stripeIds } = await updatePlanStripeLinks(await services(), {
        workspace: str(v, "workspace"),
        tool: optStr(v, "tool"),
        bundle: optStr(v, "bundle"),
        id: str(v, "id"),
        prices: one("stripe-price"),
        products: one("stripe-product"),
        remove: one("unlink-stripe"),
      });
      const linked = stripeIds.length === 0 ? "no Stripe price or product" : stripeIds.join(", ");
      return { json: { ...planJson(plan), stripe: stripeIds }, text: `Plan ${plan.id} of ${plan.productKind} ${plan.productId} is linked to ${linked}.` };
    },
  },
  "admin bundle list": {
    summary: "List a workspace's bundles with their tools.",
    usage: "warden admin bundle list --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const bundles = await listBundles((await services()).db, { workspace: str(v, "workspace") });
      return {
        json: bundles.map((b) => ({ id: b.id, name: b.name, tools: b.toolIds, created_at: isoOrNull(b.createdAt) })),
        text: table(
          "No bundles.",
          ["ID", "TOOLS", "CREATED", "NAME"],
          bundles.map((b) => [b.id, b.toolIds.join(","), minute(b.createdAt), b.name]),
        ),
      };
    },
  },
  "admin bundle create": {
    summary: "Add a bundle: several tools sold together.",
    usage: "warden admin bundle create --workspace S --id B --name N --tools t1,t2",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" }, tools: { type: "string" } },
    required: ["workspace", "id", "name", "tools"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const bundle = await createBundle(db, clock, {
        workspace: str(v, "workspace"),
        id: str(v, "id"),
        name: str(v, "name"),
        toolIds: str(v, "tools").split(","),
      });
      return { json: { id: bundle.id, name: bundle.name, tools: bundle.toolIds }, text: `Created bundle ${bundle.id} of ${bundle.toolIds.join(", ")}.` };
    },
  },
  "admin bundle update": {
    summary: "Change the tools a bundle names: its buyers gain or lose them at once (--dry-run says who, changing nothing).",
    usage: "warden admin bundle update --workspace S --id B --tools t1,t2 [--dry-run]",
    options: { workspace: { type: "string" }, id: { type: "string" }, tools: { type: "string" }, "dry-run": { type: "boolean" } },
    required: ["workspace", "id", "tools"],
    async run({ values: v, services }) {
      const change = await changeBundleTools(await services(), {
        workspace: str(v, "workspace"),
        id: str(v, "id"),
        toolIds: str(v, "tools").split(","),
        apply: v["dry-run"] !== true,
      });
      const people = (n: number, complete: boolean) => `${complete ? "" : "at least "}${n} ${n === 1 ? "person" : "people"}`;
      const lines = change.consequences.flatMap((c) => [
        ...c.gain.map((t) => `${c.env}: ${people(t.people, c.complete)} ${change.applied ? "gained" : "would gain"} ${t.toolId}.`),
        ...c.lose.map((t) => `${c.env}: ${people(t.people, c.complete)} ${change.applied ? "lost" : "would lose"} ${t.toolId}.`),
      ]);
      const head = change.applied
        ? `Bundle ${change.bundle.id} now names ${change.bundle.toolIds.join(", ")}.`
        : `Dry run: bundle ${change.bundle.id} would name ${change.bundle.toolIds.join(", ")} (nothing changed).`;
      return {
        json: {
          id: change.bundle.id,
          tools: change.bundle.toolIds,
          added: change.added,
          removed: change.removed,
          applied: change.applied,
          consequences: change.consequences.map((c) => ({
            env: c.env,
            buyers: c.buyers,
            complete: c.complete,
            gain: Object.fromEntries(c.gain.map((t) => [t.toolId, t.people])),
            lose: Object.fromEntries(c.lose.map((t) => [t.toolId, t.people])),
          })),
        },
        text: [head, ...lines].join("\n"),
      };
    },
  },
  "admin key list": {
    summary: "List a workspace's API keys (never their secrets), with when each was last used.",
    usage: "warden admin key list --workspace S [--env test|live]",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const keys = await listKeys(await services(), { workspace: str(v, "workspace"), env: optStr(v, "env") });
      // Keys made before migration 013 have no last four to show.
      const shown = (k: { env: string; lastFour: string | null }) => `wk_${k.env}_…${k.lastFour ?? ""}`;
      return {
        json: keys.map((k) => ({
          id: k.id,
          name: k.name,
          env: k.env,
          key: shown(k),
          created_at: isoOrNull(k.createdAt),
          last_used_at: isoOrNull(k.lastUsedAt),
          revoked_at: isoOrNull(k.revokedAt),
        })),
        text: table(
          "No keys.",
          ["ID", "ENV", "KEY", "CREATED", "LAST USED", "REVOKED", "NAME"],
          keys.map((k) => [
            k.id,
            k.env,
            shown(k),
            minute(k.createdAt),
            k.lastUsedAt === null ? "never" : minute(k.lastUsedAt),
            minute(k.revokedAt),
            k.name ?? "",
          ]),
        ),
      };
    },
  },
  "admin key create": {
    summary: "Create an API key for a workspace's test or live environment; shown this once.",
    usage: "warden admin key create --workspace S --env test|live [--name N]",
    options: { workspace: { type: "string" }, env: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const key = await createKey(db, clock, { workspace: str(v, "workspace"), env: str(v, "env"), name: optStr(v, "name") });
      // The key itself is shown this once; only its hash is stored.
      return { json: { id: key.id, key: key.key }, text: `${JSON.stringify({ id: key.id, key: key.key })}\nKeep the key now: it is not shown again.` };
    },
  },
  "admin key revoke": {
    summary: "Revoke an API key: it answers 401 from the next request.",
    usage: "warden admin key revoke --id KEY_ID",
    options: { id: { type: "string" } },
    required: ["id"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const revoked = await revokeKey(db, clock, { id: str(v, "id") });
      return { json: { id: revoked.id, revoked_at: new Date(revoked.revokedAt).toISOString() }, text: `Revoked ${revoked.id}.` };
    },
  },
  "admin import": {
    summary: "Import customers bought elsewhere from an NDJSON file (all or nothing; Ctrl-C rolls back).",
    usage: "warden admin import --workspace S --env test|live FILE",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    positionals: 1,
    async run({ values: v, positionals: [file], services, progress, clock: progressClock, interruption }) {
      const { db, clock } = await services();
      // With --json stdout holds only the summary; the figures go on a terminal only.
      const reporter = v.json && progress.columns === undefined ? null : importProgressReporter(progress, progressClock);
      let summary: ImportSummary;
      try {
        summary = await importFile(
          db,
          clock,
          { workspace: str(v, "workspace"), env: str(v, "env"), path: file as string },
          { onProgress: (p) => reporter?.update(p), signal: interruption() },
        );
      } catch (error) {
        reporter?.end();
        if (error instanceof ImportInterrupted) throw new Interrupted(error.message);
        throw error;
      }
      reporter?.finish();
      const { unchanged, ...written } = summary;
      const text = Object.entries(written)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(", ");
      return { json: summary, text: `Imported ${text}; ${unchanged} line${unchanged === 1 ? "" : "s"} stored already as they are (unchanged).` };
    },
  },
  "admin backup": {
    summary: "Copy the SQLite database consistently while Warden runs and writes (PostgreSQL: use pg_dump).",
    usage: "warden admin backup FILE",
    options: {},
    positionals: 1,
    async run({ positionals: [file], services }) {
      const backup = await backupDatabase((await services()).config, file as string);
      const key = backup.secretKeyFile
        ? `\nKeep ${backup.secretKeyFile} with it: it seals the webhook and Stripe secrets, the licence keys and the token signing keys (or set WARDEN_SECRET_KEY).`
        : "";
      return { json: backup, text: `Backed up ${backup.source} to ${backup.file} (${backup.bytes} bytes).${key}` };
    },
  },
  "admin stripe connect": {
    summary: "Connect a workspace's environment to Stripe (its webhook secret, optionally its secret key).",
    usage: "warden admin stripe connect --workspace S --env test|live --webhook-secret whsec_… [--secret-key sk_…]",
    options: { workspace: { type: "string" }, env: { type: "string" }, "webhook-secret": { type: "string" }, "secret-key": { type: "string" } },
    required: ["workspace", "env", "webhook-secret"],
    async run({ values: v, services }) {
      const connection = await connectStripe(await services(), {
        workspace: str(v, "workspace"),
        env: str(v, "env"),
        webhookSecret: str(v, "webhook-secret"),
        secretKey: optStr(v, "secret-key"),
      });
      return {
        json: connection,
        text: `Connected ${connection.workspace} (${connection.env}) to Stripe. Point a Stripe webhook endpoint at https://<your Warden host>${connection.webhook_path}.`,
      };
    },
  },
  "admin stripe status": {
    summary: "Show a workspace environment's Stripe connection (secrets by their last four only) and the last Stripe event received.",
    usage: "warden admin stripe status --workspace S --env test|live",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
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
      const result = await disconnectStripe(await services(), { workspace: str(v, "workspace"), env: str(v, "env") });
      const text = result.disconnected
        ? `Disconnected ${str(v, "workspace")} (${str(v, "env")}) from Stripe.`
        : `${str(v, "workspace")} (${str(v, "env")}) was not connected to Stripe.`;
      return { json: result, text };
    },
  },
  "admin licence refund": {
    summary: "Refund a licence: revoke it and send payment.refunded.",
    usage: "warden admin licence refund --id LIC",
    options: { id: { type: "string" } },
    required: ["id"],
    async run({ values: v, services }) {
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
