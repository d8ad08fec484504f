// `warden admin workspace|tool|plan|bundle …`: what a workspace sells, as the dashboard's
// Catalogue pages change it, through the same use cases.

import { readFile } from "node:fs/promises";

import { invalidParameter } from "../errors/errors.js";

import type { Plan, Tool } from "../workspaces/workspace.types.js";
import { type Command, optStr, str } from "./command.js";
import { isoOrNull, listText, minute } from "./table.js";

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
  gives_access: plan.givesAccess,
  retired_at: isoOrNull(plan.retiredAt),
});
const price = (plan: Plan) =>
  plan.amountCents === null ? "-" : `${(plan.amountCents / 100).toFixed(2)} ${plan.currency}${plan.interval ? ` a ${plan.interval}` : ""}`;
const trialText = (tool: Tool) => (tool.trialDays > 0 ? ` (a ${tool.trialDays}-day trial)` : " (no trial)");

export const catalogueCommands: Record<string, Command> = {
  "admin workspace list": {
    summary: "List workspaces, or those of one owner.",
    usage: "warden admin workspace list [--owner E]",
    options: { owner: { type: "string" } },
    async run({ values: v, services }) {
      const { listWorkspaces } = await import("../workspaces/workspace.service.js");
      const workspaces = await listWorkspaces((await services()).db, { ownerEmail: optStr(v, "owner") });
      return {
        json: workspaces.map((w) => ({ id: w.id, slug: w.slug, name: w.name, plan: w.plan, owners: w.owners, created_at: isoOrNull(w.createdAt) })),
        text: listText(
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
      const { createWorkspace } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const ws = await createWorkspace(db, clock, { slug: str(v, "slug"), name: str(v, "name"), ownerEmail: str(v, "owner"), plan: optStr(v, "plan") });
      return { json: { id: ws.id, slug: ws.slug, name: ws.name, plan: ws.plan }, text: `Created workspace ${ws.slug} (${ws.plan}).` };
    },
  },
  "admin workspace update": {
    summary:
      "Set the branding of a workspace's hosted customer pages: an accent colour (white text on it at least 4.5:1), a PNG, JPEG or WebP logo, and their default language.",
    usage: 'warden admin workspace update --workspace S [--accent "#1f6f43" | --accent ""] [--logo FILE | --logo ""] [--language de | --language ""]',
    options: { workspace: { type: "string" }, accent: { type: "string" }, logo: { type: "string" }, language: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { updateBranding } = await import("../customer-pages/branding.service.js");
      const logoPath = optStr(v, "logo");
      const logo =
        logoPath === undefined
          ? undefined
          : logoPath === ""
            ? null
            : await readFile(logoPath).catch(() => {
                throw invalidParameter("logo", `Cannot read the file ${logoPath}.`);
              });
      const brand = await updateBranding(await services(), {
        workspace: str(v, "workspace"),
        accent: optStr(v, "accent"),
        logo,
        language: optStr(v, "language"),
      });
      return {
        json: { workspace: str(v, "workspace"), accent: brand.accent, logo_type: brand.logoType, language: brand.language, version: brand.version },
        text: `Branding of ${str(v, "workspace")}: accent ${brand.accent ?? "none (Warden's blue)"}, logo ${brand.logoType ?? "none"}, language ${brand.language ?? "none (English)"}.`,
      };
    },
  },
  "admin tool list": {
    summary: "List a workspace's tools.",
    usage: "warden admin tool list --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { listTools } = await import("../workspaces/workspace.service.js");
      const tools = await listTools((await services()).db, { workspace: str(v, "workspace") });
      return {
        json: tools.map((t) => ({ ...toolJson(str(v, "workspace"), t), created_at: isoOrNull(t.createdAt) })),
        text: listText(
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
      const { createTool } = await import("../workspaces/workspace.service.js");
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
      const { updateTool } = await import("../workspaces/workspace.service.js");
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
      const { listPlans } = await import("../workspaces/workspace.service.js");
      const plans = await listPlans((await services()).db, { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle") });
      return {
        json: plans.map((p) => ({ ...planJson(p), created_at: isoOrNull(p.createdAt) })),
        text: listText(
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
      "warden admin plan create --workspace S (--tool TOOL | --bundle B) --id PLAN --name N --billing one_time|subscription [--amount-cents N] [--currency eur] [--interval month|year] [--default] [--pack]",
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
      pack: { type: "boolean" },
    },
    required: ["workspace", "id", "name", "billing"],
    async run({ values: v, services }) {
      const { createPlan } = await import("../workspaces/workspace.service.js");
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
        givesAccess: v.pack !== true,
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
      const { renamePlan } = await import("../workspaces/workspace.service.js");
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
  "admin names set": {
    summary:
      "Give a tool's, bundle's, plan's, feature's or meter's name in one language of the customer pages (an empty name removes it: the default name shows again).",
    usage: 'warden admin names set --workspace S (--tool TOOL | --bundle B) [--plan P | --feature F | --meter M] --language de --name N | --name ""',
    options: {
      workspace: { type: "string" },
      tool: { type: "string" },
      bundle: { type: "string" },
      plan: { type: "string" },
      feature: { type: "string" },
      meter: { type: "string" },
      language: { type: "string" },
      name: { type: "string" },
    },
    // --name "" removes the name, which `required` would take for a missing option.
    required: ["workspace", "language"],
    async run({ values: v, services }) {
      const { setSubjectNames } = await import("../workspaces/translated-names.service.js");
      const name = optStr(v, "name");
      if (name === undefined) throw invalidParameter("name", 'Give --name: the name in that language, or --name "" to remove it.');
      const tool = optStr(v, "tool");
      const bundle = optStr(v, "bundle");
      if ((tool === undefined) === (bundle === undefined)) throw invalidParameter("tool", "Give exactly one of --tool or --bundle.");
      const items = (["plan", "feature", "meter"] as const).filter((kind) => optStr(v, kind) !== undefined);
      if (items.length > 1) throw invalidParameter("plan", "Give at most one of --plan, --feature or --meter.");
      const kind: "product" | (typeof items)[number] = items[0] ?? "product";
      const { db, clock } = await services();
      const subject = {
        kind,
        productKind: tool !== undefined ? ("tool" as const) : ("bundle" as const),
        productId: tool ?? bundle ?? "",
        itemId: kind === "product" ? "" : (optStr(v, kind) ?? ""),
      };
      const set = await setSubjectNames(db, clock, { workspace: str(v, "workspace"), subject, names: { [str(v, "language")]: name } });
      return {
        json: { default_name: set.defaultName, names: set.names },
        text: `${set.defaultName}: ${
          Object.entries(set.names)
            .map(([language, name]) => `${language} "${name}"`)
            .join(", ") || "no other names"
        }.`,
      };
    },
  },
  "admin plan retire": {
    summary: "Retire a plan: no longer offered at checkout, kept for the licences and subscriptions bought with it.",
    usage: "warden admin plan retire --workspace S (--tool TOOL | --bundle B) --id PLAN",
    options: { workspace: { type: "string" }, tool: { type: "string" }, bundle: { type: "string" }, id: { type: "string" } },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const { retirePlan } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const plan = await retirePlan(db, clock, { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle"), id: str(v, "id") });
      const text = plan.retiredNow
        ? `Retired plan ${plan.id} of ${plan.productKind} ${plan.productId}: checkout no longer offers it; what was bought with it keeps it.`
        : `Plan ${plan.id} of ${plan.productKind} ${plan.productId} was retired already.`;
      return { json: planJson(plan), text };
    },
  },
  "admin plan update": {
    summary:
      "Link a plan to a Stripe Price or Product (a purchase without Warden's metadata is mapped to it), or, per environment, to a Paddle price or product (Paddle's checkout sells it; a Paddle purchase must pay it).",
    usage:
      "warden admin plan update --workspace S (--tool TOOL | --bundle B) --id PLAN [--stripe-price price_…] [--stripe-product prod_…] [--unlink-stripe price_…|prod_…] [--env test|live --paddle-price pri_… | --paddle-product pro_… | --unlink-paddle pri_…|pro_…]",
    options: {
      workspace: { type: "string" },
      tool: { type: "string" },
      bundle: { type: "string" },
      id: { type: "string" },
      "stripe-price": { type: "string" },
      "stripe-product": { type: "string" },
      "unlink-stripe": { type: "string" },
      env: { type: "string" },
      "paddle-price": { type: "string" },
      "paddle-product": { type: "string" },
      "unlink-paddle": { type: "string" },
    },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const one = (name: string) => (optStr(v, name) === undefined ? [] : [str(v, name)]);
      const plan = { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle"), id: str(v, "id") };
      const paddle = ["paddle-price", "paddle-product", "unlink-paddle"].some((name) => optStr(v, name) !== undefined);
      if (paddle) {
        // Paddle's sandbox and live hold their own ids: a link is the environment's.
        const { updatePlanPaddleLinks } = await import("../paddle/paddle-plan-link.service.js");
        const linked = await updatePlanPaddleLinks(await services(), {
          ...plan,
          env: str(v, "env"),
          prices: one("paddle-price"),
          products: one("paddle-product"),
          remove: one("unlink-paddle"),
        });
        const ids = linked.paddleIds.length === 0 ? "no Paddle price or product" : linked.paddleIds.join(", ");
        return {
          json: { ...planJson(linked.plan), env: linked.env, paddle: linked.paddleIds },
          text: `Plan ${linked.plan.id} of ${linked.plan.productKind} ${linked.plan.productId} is linked to ${ids} in ${linked.env}.`,
        };
      }
      const { updatePlanStripeLinks } = await import("../stripe/stripe-plan-link.service.js");
      const { plan: updated, stripeIds } = await updatePlanStripeLinks(await services(), {
        ...plan,
        prices: one("stripe-price"),
        products: one("stripe-product"),
        remove: one("unlink-stripe"),
      });
      const linked = stripeIds.length === 0 ? "no Stripe price or product" : stripeIds.join(", ");
      return {
        json: { ...planJson(updated), stripe: stripeIds },
        text: `Plan ${updated.id} of ${updated.productKind} ${updated.productId} is linked to ${linked}.`,
      };
    },
  },
  "admin bundle list": {
    summary: "List a workspace's bundles with their tools.",
    usage: "warden admin bundle list --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { listBundles } = await import("../workspaces/workspace.service.js");
      const bundles = await listBundles((await services()).db, { workspace: str(v, "workspace") });
      return {
        json: bundles.map((b) => ({ id: b.id, name: b.name, tools: b.toolIds, created_at: isoOrNull(b.createdAt) })),
        text: listText(
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
      const { createBundle } = await import("../workspaces/workspace.service.js");
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
      const { changeBundleTools } = await import("../workspaces/bundle.service.js");
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
};
