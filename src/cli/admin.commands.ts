// `warden admin …`: the operator's commands. They work directly on the database named
// by DATABASE_URL (or the SQLite file), with the same use cases as the HTTP API.
import { ApiError } from "../errors/errors.js";
import { importFile } from "../import/import.service.js";
import {
  createBundle,
  createKey,
  createOwner,
  createPlan,
  createTool,
  createWorkspace,
  revokeKey,
  setOwnerSuspension,
} from "../workspaces/workspace.service.js";
import { type Command, optStr, str } from "./command.js";

function parseAmount(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new ApiError("invalid_parameter", "--amount-cents must be a whole number.", { param: "amount-cents" });
  return Number(raw);
}

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
    usage: "warden admin tool create --workspace S --id TOOL --name N",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "id", "name"],
    async run({ values: v, services }) {
      const { db, clock } = await services();
      const tool = await createTool(db, clock, { workspace: str(v, "workspace"), id: str(v, "id"), name: str(v, "name") });
      return { json: { id: tool.id, name: tool.name, workspace: str(v, "workspace") }, text: `Created tool ${tool.id}.` };
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
};
