// `warden admin feature|meter …` and `warden admin plan terms`: what a tool sells besides
// itself, through the same use cases as the dashboard's Configure pages.
import { invalidParameter } from "../errors/errors.js";

import type { Meter, PlanTerms } from "../usage/usage.types.js";
import { type Command, optStr, str, type Values } from "./command.js";
import { isoOrNull, listText } from "./table.js";

const meterJson = (m: Meter) => ({ id: m.id, name: m.name, unit: m.unit, free_allowance: m.freeAllowance, created_at: isoOrNull(m.createdAt) });
const termsJson = (tool: string, t: PlanTerms) => ({
  tool,
  features: t.features,
  allowances: t.allowances,
  credits: t.credits,
  credits_expire_days: t.creditsExpireDays,
});
const perMeterText = (units: Record<string, number>) =>
  Object.keys(units).length === 0
    ? "none"
    : Object.entries(units)
        .map(([m, n]) => `${m} ${n}`)
        .join(", ");
const termsText = (tool: string, t: PlanTerms) =>
  [
    `Tool ${tool}:`,
    `  features    ${t.features.length === 0 ? "none" : t.features.join(", ")}`,
    `  allowances  ${perMeterText(t.allowances)} (each period)`,
    `  credits     ${perMeterText(t.credits)} (each purchase${t.creditsExpireDays === null ? "" : `, lasting ${t.creditsExpireDays} days`})`,
  ].join("\n");

/** `a,b` → ["a", "b"]; an empty value → none. */
const listOf = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

/** `summaries=500,pages=20` → {summaries: "500", pages: "20"}; an empty value → none. */
function perMeter(param: string, value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of listOf(value)) {
    const [meter, units, extra] = part.split("=");
    if (meter === undefined || units === undefined || extra !== undefined || meter.trim() === "") {
      throw invalidParameter(param, `--${param} takes meter=units pairs separated by commas, such as summaries=500,pages=20.`);
    }
    out[meter.trim()] = units.trim();
  }
  return out;
}

const toolOptions = { workspace: { type: "string" }, tool: { type: "string" } } as const;
const ref = (v: Values) => ({ workspace: str(v, "workspace"), tool: str(v, "tool") });

export const usageCommands: Record<string, Command> = {
  "admin feature list": {
    summary: "List a tool's features.",
    usage: "warden admin feature list --workspace S --tool TOOL",
    options: { ...toolOptions },
    required: ["workspace", "tool"],
    async run({ values: v, services }) {
      const { readToolTerms } = await import("../usage/terms.service.js");
      const { features } = await readToolTerms((await services()).db, ref(v));
      return {
        json: features.map((f) => ({ id: f.id, name: f.name, created_at: isoOrNull(f.createdAt) })),
        text: listText(
          "No features.",
          ["ID", "NAME"],
          features.map((f) => [f.id, f.name]),
        ),
      };
    },
  },
  "admin feature add": {
    summary: "Declare a feature of a tool (plans unlock it with `plan terms --features`).",
    usage: "warden admin feature add --workspace S --tool TOOL --id FEATURE --name N",
    options: { ...toolOptions, id: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "tool", "id", "name"],
    async run({ values: v, services }) {
      const { addFeature } = await import("../usage/terms.service.js");
      const { db, clock } = await services();
      const feature = await addFeature(db, clock, { ...ref(v), id: str(v, "id"), name: str(v, "name") });
      return { json: { id: feature.id, name: feature.name, tool: str(v, "tool") }, text: `Added feature ${feature.id} to tool ${str(v, "tool")}.` };
    },
  },
  "admin feature rename": {
    summary: "Rename a feature (its id never changes).",
    usage: "warden admin feature rename --workspace S --tool TOOL --id FEATURE --name N",
    options: { ...toolOptions, id: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "tool", "id", "name"],
    async run({ values: v, services }) {
      const { renameFeature } = await import("../usage/terms.service.js");
      const { db, clock } = await services();
      const feature = await renameFeature(db, clock, { ...ref(v), id: str(v, "id"), name: str(v, "name") });
      return { json: { id: feature.id, name: feature.name, tool: str(v, "tool") }, text: `Renamed feature ${feature.id} to "${feature.name}".` };
    },
  },
  "admin meter list": {
    summary: "List a tool's meters.",
    usage: "warden admin meter list --workspace S --tool TOOL",
    options: { ...toolOptions },
    required: ["workspace", "tool"],
    async run({ values: v, services }) {
      const { readToolTerms } = await import("../usage/terms.service.js");
      const { meters } = await readToolTerms((await services()).db, ref(v));
      return {
        json: meters.map(meterJson),
        text: listText(
          "No meters.",
          ["ID", "UNIT", "FREE A MONTH", "NAME"],
          meters.map((m) => [m.id, m.unit, m.freeAllowance === null ? "-" : String(m.freeAllowance), m.name]),
        ),
      };
    },
  },
  "admin meter add": {
    summary: "Declare a meter of a tool: what a person spends, with an optional free allowance each calendar month.",
    usage: "warden admin meter add --workspace S --tool TOOL --id METER --name N --unit U [--free N]",
    options: { ...toolOptions, id: { type: "string" }, name: { type: "string" }, unit: { type: "string" }, free: { type: "string" } },
    required: ["workspace", "tool", "id", "name", "unit"],
    async run({ values: v, services }) {
      const { addMeter } = await import("../usage/terms.service.js");
      const { db, clock } = await services();
      const meter = await addMeter(db, clock, { ...ref(v), id: str(v, "id"), name: str(v, "name"), unit: str(v, "unit"), freeAllowance: optStr(v, "free") });
      return { json: meterJson(meter), text: `Added meter ${meter.id} (${meter.unit}) to tool ${str(v, "tool")}.` };
    },
  },
  "admin meter update": {
    summary: 'Change a meter\'s name, unit or free allowance (--free "" offers none).',
    usage: 'warden admin meter update --workspace S --tool TOOL --id METER [--name N] [--unit U] [--free N | --free ""]',
    options: { ...toolOptions, id: { type: "string" }, name: { type: "string" }, unit: { type: "string" }, free: { type: "string" } },
    required: ["workspace", "tool", "id"],
    async run({ values: v, services }) {
      const { updateMeter } = await import("../usage/terms.service.js");
      const { db, clock } = await services();
      const meter = await updateMeter(db, clock, {
        ...ref(v),
        id: str(v, "id"),
        name: optStr(v, "name"),
        unit: optStr(v, "unit"),
        freeAllowance: optStr(v, "free"),
      });
      return {
        json: meterJson(meter),
        text: `Meter ${meter.id}: ${meter.name} (${meter.unit}), ${meter.freeAllowance === null ? "no free allowance" : `${meter.freeAllowance} free a month`}.`,
      };
    },
  },
  "admin plan terms": {
    summary: "Show or set what a plan gives for a tool: features, allowances per period, credits per purchase.",
    usage:
      "warden admin plan terms --workspace S (--tool TOOL | --bundle B) --id PLAN [--for-tool TOOL] [--features a,b] [--allowances meter=N,…] [--credits meter=N,…] [--credits-expire-days N]",
    options: {
      workspace: { type: "string" },
      tool: { type: "string" },
      bundle: { type: "string" },
      id: { type: "string" },
      "for-tool": { type: "string" },
      features: { type: "string" },
      allowances: { type: "string" },
      credits: { type: "string" },
      "credits-expire-days": { type: "string" },
    },
    required: ["workspace", "id"],
    async run({ values: v, services }) {
      const { readPlanTerms, setPlanTerms } = await import("../usage/terms.service.js");
      const { db, clock } = await services();
      const plan = { workspace: str(v, "workspace"), tool: optStr(v, "tool"), bundle: optStr(v, "bundle"), id: str(v, "id"), forTool: optStr(v, "for-tool") };
      const features = optStr(v, "features");
      const allowances = optStr(v, "allowances");
      const credits = optStr(v, "credits");
      const expire = optStr(v, "credits-expire-days");
      const change = features !== undefined || allowances !== undefined || credits !== undefined || expire !== undefined;
      const { tool, terms } = change
        ? await setPlanTerms(db, clock, {
            ...plan,
            ...(features === undefined ? {} : { features: listOf(features) }),
            ...(allowances === undefined ? {} : { allowances: perMeter("allowances", allowances) }),
            ...(credits === undefined ? {} : { credits: perMeter("credits", credits) }),
            ...(expire === undefined ? {} : { creditsExpireDays: expire }),
          })
        : await readPlanTerms(db, plan);
      return { json: { plan: plan.id, ...termsJson(tool, terms) }, text: `Plan ${plan.id}. ${termsText(tool, terms)}` };
    },
  },
};
