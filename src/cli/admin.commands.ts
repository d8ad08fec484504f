// `warden admin …`: the operator's commands. They work directly on the database named
// by DATABASE_URL (or the SQLite file), with the same use cases as the HTTP API.
import { closeTestDispute, openTestDispute } from "../billing/dispute.service.js";
import { refundLicence } from "../billing/licence.service.js";
import { assignSeat, unassignSeat } from "../billing/seat.service.js";
import { cancelSubscription } from "../billing/subscription.service.js";
import { ApiError } from "../errors/errors.js";
import { importFile } from "../import/import.service.js";
import { backupDatabase } from "../retention/backup.service.js";
import { connectStripe } from "../stripe/stripe-account.service.js";
import {
  createBundle,
  createKey,
  createOwner,
  createPlan,
  createTool,
  createWorkspace,
  revokeKey,
  setOwnerSuspension,
  updateTool,
} from "../workspaces/workspace.service.js";
import type { Tool } from "../workspaces/workspace.types.js";
import { type Command, optStr, str } from "./command.js";

function parseAmount(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new ApiError("invalid_parameter", "--amount-cents must be a whole number.", { param: "amount-cents" });
  return Number(raw);
}

const toolJson = (workspace: string, tool: Tool) => ({ id: tool.id, name: tool.name, workspace, trial_days: tool.trialDays });
const trialText = (tool: Tool) => (tool.trialDays > 0 ? ` (a ${tool.trialDays}-day trial)` : " (no trial)");

export const adminCommands: Record<string, Command> = {
  "admin owner create": {
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
    usage: "warden admin owner unsuspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: false });
      return { json: { id: owner.id, email: owner.email, suspended: false }, text: `Lifted the suspension of ${owner.email}.` };
    },
  },
  "admin workspace create": {
    usage: "warden admin workspace create --slug S --name N --owner E [--plan hobby|pro]",
    options: { slug: { type: "string" }, name: { type: "string" }, owner: { type: "string" }, plan: { type: "string" } },
    required: ["slug", "name", "owner"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const ws = await createWorkspace(db, clock, { slug: str(v, "slug"), name: str(v, "name"), ownerEmail: str(v, "owner"), plan: optStr(v, "plan") });
      return { json: { id: ws.id, slug: ws.slug, name: ws.name, plan: ws.plan }, text: `Created workspace ${ws.slug} (${ws.plan}).` };
    },
  },
  "admin tool create": {
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
    usage: "warden admin tool update --workspace S --id TOOL [--name N] [--trial-days N]",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" }, "trial-days": { type: "string" } },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const { db } = await services();
      const tool = await updateTool(db, { workspace: str(v, "workspace"), id: str(v, "id"), name: optStr(v, "name"), trialDays: optStr(v, "trial-days") });
      return { json: toolJson(str(v, "workspace"), tool), text: `Updated tool ${tool.id}${trialText(tool)}.` };
    },
  },
  "admin plan create": {
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
        amountCents: parseAmount(optStr(v, "amount-cents")),
        currency: optStr(v, "currency"),
        interval: optStr(v, "interval"),
        isDefault: v.default === true,
      });
      const json = {
        id: plan.id,
        [plan.productKind]: plan.productId,
        name: plan.name,
        billing: plan.billing,
        amountCents: plan.amountCents,
        currency: plan.currency,
        interval: plan.interval,
        default: plan.isDefault,
      };
      return { json, text: `Created plan ${plan.id} for ${plan.productKind} ${plan.productId}.` };
    },
  },
  "admin bundle create": {
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
  "admin key create": {
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
    usage: "warden admin import --workspace S --env test|live FILE",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    positionals: 1,
    async run({ values: v, positionals: [file], services }) {
      const { db, clock } = await services();
      const counts = await importFile(db, clock, { workspace: str(v, "workspace"), env: str(v, "env"), path: file as string });
      const summary = Object.entries(counts)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(", ");
      return { json: counts, text: `Imported ${summary}.` };
    },
  },
  "admin backup": {
    usage: "warden admin backup FILE   (a consistent copy of the SQLite database while Warden runs)",
    options: {},
    positionals: 1,
    async run({ positionals: [file], services }) {
      const backup = await backupDatabase((await services()).config, file as string);
      const key = backup.secretKeyFile ? `\nKeep ${backup.secretKeyFile} with it: it seals the webhook and Stripe secrets (or set WARDEN_SECRET_KEY).` : "";
      return { json: backup, text: `Backed up ${backup.source} to ${backup.file} (${backup.bytes} bytes).${key}` };
    },
  },
  "admin stripe connect": {
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
  "admin licence refund": {
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
    usage: "warden admin dispute open --licence LIC   (test environment only)",
    options: { licence: { type: "string" } },
    required: ["licence"],
    async run({ values: v, services }) {
      const dispute = await openTestDispute(await services(), { licence: str(v, "licence") });
      return { json: dispute, text: `Opened dispute ${dispute.id} on ${dispute.licence}: the licence is suspended.` };
    },
  },
  "admin dispute close": {
    usage: "warden admin dispute close --id D --status won|lost|warning_closed   (test environment only)",
    options: { id: { type: "string" }, status: { type: "string" } },
    required: ["id", "status"],
    async run({ values: v, services }) {
      const dispute = await closeTestDispute(await services(), { id: str(v, "id"), status: str(v, "status") });
      return { json: dispute, text: `Closed dispute ${dispute.id}: ${dispute.status}.` };
    },
  },
  "admin seats assign": {
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
