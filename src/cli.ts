// `warden`: the service's command line. It parses arguments and calls the same use cases
// as the HTTP API (admin commands, on the database) or the API itself (webhook commands,
// with an API key). Every command prints JSON with --json and exits non-zero on bad
// input with a clear message.
import { parseArgs } from "node:util";
import { adminCommands } from "./cli/admin.commands.js";
import { CliError, type Command, type Values } from "./cli/command.js";
import { webhookCommands } from "./cli/webhook.commands.js";
import { systemClock } from "./clock.js";
import { type Config, ConfigError, parseConfig } from "./config.js";
import { ApiError, typeOf } from "./errors/errors.js";
import { describeStartFailure } from "./ops/start-up.js";
import { startServer } from "./server.js";
import { createServices, type Services } from "./services.js";

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

const commands: Record<string, Command> = { ...adminCommands, ...webhookCommands };

function helpText(): string {
  return [
    "warden: the Warden entitlement service and its command line",
    "",
    "  warden serve                         start the HTTP API (PORT, HOST, DATABASE_URL, WARDEN_DOMAIN)",
    ...Object.values(commands).map((c) => `  ${c.usage}`),
    "",
    "admin commands work on the database (DATABASE_URL or ./data); events, endpoints and deliveries",
    "talk to a running service: --api-key or WARDEN_API_KEY, --base-url or WARDEN_BASE_URL.",
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

class UsageError extends Error {}

function parseCommandLine(command: Command, rest: string[]): { values: Values; positionals: string[] } {
  const parsed = parseArgs({ args: rest, options: { ...command.options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
  const values = parsed.values as Values;
  for (const name of command.required ?? []) {
    if (typeof values[name] !== "string" || values[name] === "") throw new UsageError(`--${name} is required.`);
  }
  const [min, max] = Array.isArray(command.positionals) ? command.positionals : [command.positionals ?? 0, command.positionals ?? 0];
  if (parsed.positionals.length < min) throw new UsageError("Missing arguments.");
  if (parsed.positionals.length > max) throw new UsageError(`Unexpected arguments: ${parsed.positionals.slice(max).join(" ")}.`);
  return { values, positionals: parsed.positionals };
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
    try {
      await startServer(config);
    } catch (error) {
      return fail(1, { type: "api_error", message: describeStartFailure(error, config) });
    }
    return 0;
  }

  const found = findCommand(argv);
  if (!found) return fail(2, { type: "invalid_request_error", message: `Unknown command "${argv.join(" ")}".\n\n${helpText()}` });
  const command = commands[found.name] as Command;

  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseCommandLine(command, found.rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return fail(2, { type: "invalid_request_error", message: `${message}\nUsage: ${command.usage}` });
  }

  let services: Services | null = null;
  try {
    const result = await command.run({
      ...parsed,
      env: io.env,
      services: async () => {
        services ??= await createServices(config, { clock: systemClock });
        return services;
      },
    });
    io.stdout(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return result.exitCode ?? 0;
  } catch (error) {
    if (error instanceof ApiError) return fail(1, { type: typeOf(error.code), message: error.message, ...(error.param ? { param: error.param } : {}) });
    if (error instanceof CliError) return fail(1, { type: error.type, message: error.message, ...(error.param ? { param: error.param } : {}) });
    throw error;
  } finally {
    await (services as Services | null)?.close();
  }
}
