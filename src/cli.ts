// `warden`: the operator's command line. It parses arguments and calls the same use
// cases as the HTTP API; every command prints JSON with --json and exits non-zero on
// bad input with a clear message.
import { parseArgs } from "node:util";
import { systemClock } from "./clock.js";
import { type Config, ConfigError, parseConfig } from "./config.js";
import { ApiError, typeOf } from "./errors/errors.js";
import { importFile } from "./import/import.service.js";
import { startServer } from "./server.js";
import { createServices, type Services } from "./services.js";
import {
  createBundle,
  createKey,
  createOwner,
  createPlan,
  createTool,
  createWorkspace,
  revokeKey,
  setOwnerSuspension,
} from "./workspaces/workspace.service.js";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

type OptionSpec = Record<string, { type: "string" | "boolean"; multiple?: boolean }>;

interface Command {
  usage: string;
  options: OptionSpec;
  /** Names of options that must be given. */
  required?: string[];
  positionals?: number;
  run(services: Services, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<{ json: unknown; text: string }>;
}

class UsageError extends Error {}

const str = (values: Record<string, string | boolean | undefined>, name: string) => values[name] as string;
const optStr = (values: Record<string, string | boolean | undefined>, name: string) => values[name] as string | undefined;

function parseAmount(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new ApiError("invalid_parameter", "--amount-cents must be a whole number.", { param: "amount-cents" });
  return Number(raw);
}

export const commands: Record<string, Command> = {
  "admin owner create": {
    usage: "warden admin owner create --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ db, clock }, v) {
      const owner = await createOwner(db, clock, { email: str(v, "email") });
      return { json: { id: owner.id, email: owner.email }, text: `Created owner ${owner.email} (${owner.id}).` };
    },
  },
  "admin owner suspend": {
    usage: "warden admin owner suspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ db, clock }, v) {
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: true });
      return { json: { id: owner.id, email: owner.email, suspended: true }, text: `Suspended ${owner.email}: every key of their workspaces now answers 401.` };
    },
  },
  "admin owner unsuspend": {
    usage: "warden admin owner unsuspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ db, clock }, v) {
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: false });
      return { json: { id: owner.id, email: owner.email, suspended: false }, text: `Lifted the suspension of ${owner.email}.` };
    },
  },
  "admin workspace create": {
    usage: "warden admin workspace create --slug S --name N --owner E [--plan hobby|pro]",
    options: { slug: { type: "string" }, name: { type: "string" }, owner: { type: "string" }, plan: { type: "string" } },
    required: ["slug", "name", "owner"],
    async run({ db, clock }, v) {
      const ws = await createWorkspace(db, clock, { slug: str(v, "slug"), name: str(v, "name"), ownerEmail: str(v, "owner"), plan: optStr(v, "plan") });
      return { json: { id: ws.id, slug: ws.slug, name: ws.name, plan: ws.plan }, text: `Created workspace ${ws.slug} (${ws.plan}).` };
    },
  },
  "admin tool create": {
    usage: "warden admin tool create --workspace S --id TOOL --name N",
    options: { workspace: { type: "string" }, id: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "id", "name"],
    async run({ db, clock }, v) {
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
    async run({ db, clock }, v) {
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
    async run({ db, clock }, v) {
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
    async run({ db, clock }, v) {
      const key = await createKey(db, clock, { workspace: str(v, "workspace"), env: str(v, "env"), name: optStr(v, "name") });
      // The key itself is shown this once; only its hash is stored.
      return { json: { id: key.id, key: key.key }, text: `${JSON.stringify({ id: key.id, key: key.key })}\nKeep the key now: it is not shown again.` };
    },
  },
  "admin key revoke": {
    usage: "warden admin key revoke --id KEY_ID",
    options: { id: { type: "string" } },
    required: ["id"],
    async run({ db, clock }, v) {
      const revoked = await revokeKey(db, clock, { id: str(v, "id") });
      return { json: { id: revoked.id, revoked_at: new Date(revoked.revokedAt).toISOString() }, text: `Revoked ${revoked.id}.` };
    },
  },
  "admin import": {
    usage: "warden admin import --workspace S --env test|live FILE",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    positionals: 1,
    async run({ db, clock }, v, [file]) {
      const counts = await importFile(db, clock, { workspace: str(v, "workspace"), env: str(v, "env"), path: file as string });
      const summary = Object.entries(counts)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(", ");
      return { json: counts, text: `Imported ${summary}.` };
    },
  },
};

function helpText(): string {
  return [
    "warden: the Warden entitlement service and its operator commands",
    "",
    "  warden serve                         start the HTTP API (PORT, HOST, DATABASE_URL, WARDEN_DOMAIN)",
    ...Object.values(commands).map((c) => `  ${c.usage}`),
    "",
    "Every command takes --json for machine-readable output.",
  ].join("\n");
}

/** Finds the longest command name that the arguments start with. */
function findCommand(argv: string[]): { name: string; rest: string[] } | null {
  for (let words = 3; words >= 1; words--) {
    const name = argv.slice(0, words).join(" ");
    if (commands[name]) return { name, rest: argv.slice(words) };
  }
  return null;
}

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const json = argv.includes("--json");
  const fail = (code: number, error: { type: string; message: string; param?: string }) => {
    io.stderr(json ? `${JSON.stringify({ error })}\n` : `warden: ${error.message}\n`);
    return code;
  };

  let config: Readonly<Config>;
  try {
    config = parseConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(2, { type: "invalid_request_error", message: error.message });
    throw error;
  }

  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    io.stdout(`${helpText()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === "serve") {
    await startServer(config);
    return 0;
  }

  const found = findCommand(argv);
  if (!found) return fail(2, { type: "invalid_request_error", message: `Unknown command "${argv.join(" ")}".\n\n${helpText()}` });
  const command = commands[found.name] as Command;

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: found.rest, options: { ...command.options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
    for (const name of command.required ?? []) {
      if (typeof values[name] !== "string" || values[name] === "") throw new UsageError(`--${name} is required.`);
    }
    if (positionals.length !== (command.positionals ?? 0)) throw new UsageError(`Unexpected arguments: ${positionals.join(" ")}.`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return fail(2, { type: "invalid_request_error", message: `${message}\nUsage: ${command.usage}` });
  }

  const services = await createServices(config, { clock: systemClock });
  try {
    const result = await command.run(services, values, positionals);
    io.stdout(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return fail(1, { type: typeOf(error.code), message: error.message, ...(error.param ? { param: error.param } : {}) });
  } finally {
    await services.close();
  }
}
