// `warden`: the service's command line. It parses arguments and calls the same use cases
// as the HTTP API (admin commands, on the database) or the API itself (webhook commands,
// with an API key). Every command prints JSON with --json and exits non-zero on bad
// input with a clear message.
import { CliError, type Command, Interrupted, type Values } from "./cli/command.js";
import { commandsOf, describeCommand, parseCommandLine, resolve, UsageError } from "./cli/command-line.js";
import { type Clock, systemClock } from "./clock.js";
import { type Config, ConfigError, parseConfig } from "./config.js";
import { ApiError, typeOf } from "./errors/errors.js";
import { describeUnsupportedNode } from "./ops/node-version.js";
import type { Services } from "./services.js";
import { WARDEN_VERSION } from "./version.js";

// What this file imports at the top is only what `warden --version` needs; the command
// files, imported for anything else, hold the commands' usage and summaries and import
// their use cases when they run. The server and the services (the database, every store)
// are imported when a command needs them: loading the whole domain took over a second of
// CPU before any command did anything.

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** The terminal's width when stderr is one (progress is then a bar); undefined otherwise. */
  stderrColumns?: () => number | undefined;
  /** The clock of the services and of progress output; the system's by default. */
  clock?: Clock;
  /** Calls `handler` on Ctrl-C until the returned function is called. */
  onInterrupt?: (handler: () => void) => () => void;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  stderrColumns: () => (process.stderr.isTTY ? process.stderr.columns : undefined),
  // Once: a second Ctrl-C ends the process at once, as it would without a handler (an
  // open transaction is then rolled back by the database).
  onInterrupt: (handler) => {
    process.once("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
};

async function loadCommands(): Promise<Record<string, Command>> {
  const [{ adminCommands }, { webhookCommands }] = await Promise.all([import("./cli/admin.commands.js"), import("./cli/webhook.commands.js")]);
  return { ...adminCommands, ...webhookCommands };
}

function helpText(commands: Record<string, Command>): string {
  return [
    "warden: the Warden entitlement service and its command line",
    "",
    "  warden serve",
    "      Start the HTTP API (PORT, HOST, DATABASE_URL, WARDEN_DOMAIN).",
    ...Object.values(commands).map(describeCommand),
    "  warden --version (or version, -v)",
    "      Print Warden's version.",
    "",
    "admin commands work on the database (DATABASE_URL or ./data); events, endpoints and deliveries",
    "talk to a running service: --api-key or WARDEN_API_KEY, --base-url or WARDEN_BASE_URL",
    "(http://127.0.0.1:8080 by default; the API's address, ending in /api/v1, is accepted too).",
    "Every command takes --json for machine-readable output; warden <group> lists a group's commands.",
  ].join("\n");
}

function groupText(commands: Record<string, Command>, group: string): string {
  return [`Commands of warden ${group}:`, ...commandsOf(commands, group).map(describeCommand)].join("\n");
}

const isHelp = (arg: string) => arg === "--help" || arg === "-h";

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const json = argv.includes("--json");
  const fail = (code: number, error: { type: string; message: string; param?: string }) => {
    io.stderr(json ? `${JSON.stringify({ error })}\n` : `warden: ${error.message}\n`);
    return code;
  };

  const unsupported = describeUnsupportedNode(process.version);
  if (unsupported !== null) return fail(1, { type: "api_error", message: unsupported });

  // Help and the version need no configuration: `docker run warden warden --version`
  // answers without WARDEN_PUBLIC_URL.
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
    io.stdout(`${WARDEN_VERSION}\n`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    io.stdout(`${helpText(await loadCommands())}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const configured = (): Readonly<Config> | number => {
    try {
      return parseConfig(io.env);
    } catch (error) {
      if (error instanceof ConfigError) return fail(2, { type: "invalid_request_error", message: error.message });
      throw error;
    }
  };
  if (argv[0] === "serve") {
    const config = configured();
    if (typeof config === "number") return config;
    const { describeStartFailure } = await import("./ops/start-up.js");
    try {
      const { startServer } = await import("./server.js");
      await startServer(config, (line) => io.stderr(`warden: ${line}\n`));
    } catch (error) {
      return fail(1, { type: "api_error", message: describeStartFailure(error, config) });
    }
    return 0;
  }

  const commands = await loadCommands();
  const found = resolve(commands, argv);
  if (found.kind === "unknown")
    return fail(2, { type: "invalid_request_error", message: `Unknown command "${argv.join(" ")}"; warden help lists every command.` });
  if (found.kind === "group") {
    const [next] = found.rest;
    if (next === undefined || isHelp(next) || next === "--json" || next === "help") {
      io.stdout(`${groupText(commands, found.group)}\n`);
      return 0;
    }
    return fail(2, { type: "invalid_request_error", message: `Unknown command "${found.group} ${next}".\n\n${groupText(commands, found.group)}` });
  }
  const command = commands[found.name] as Command;
  if (found.rest.some(isHelp)) {
    io.stdout(`${describeCommand(command)}\n`);
    return 0;
  }

  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseCommandLine(found.name, command, found.rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return fail(2, { type: "invalid_request_error", message: `${error.message}\nUsage: ${command.usage}` });
  }

  const config = configured();
  if (typeof config === "number") return config;
  let services: Services | null = null;
  const clock = io.clock ?? systemClock;
  let interruption: { controller: AbortController; stop: () => void } | null = null;
  try {
    const result = await command.run({
      ...parsed,
      env: io.env,
      services: async () => {
        try {
          const [{ createServices }, { QuietMetrics }] = await Promise.all([import("./services.js"), import("./ops/quiet-metrics.js")]);
          services ??= await createServices(config, { clock, metrics: new QuietMetrics() });
        } catch (error) {
          // The faults `warden serve` explains in one line are told here in the same words;
          // anything else is a bug and keeps its stack.
          const { describeDatabaseFailure } = await import("./ops/start-up.js");
          const fault = describeDatabaseFailure(error, config);
          throw fault === null ? error : new CliError("api_error", fault);
        }
        return services;
      },
      progress: { write: io.stderr, columns: io.stderrColumns?.() },
      clock,
      interruption: () => {
        if (!interruption) {
          const controller = new AbortController();
          interruption = { controller, stop: io.onInterrupt?.(() => controller.abort()) ?? (() => {}) };
        }
        return interruption.controller.signal;
      },
    });
    io.stdout(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return result.exitCode ?? 0;
  } catch (error) {
    if (error instanceof ApiError) return fail(1, { type: typeOf(error.code), message: error.message, ...(error.param ? { param: error.param } : {}) });
    if (error instanceof CliError) return fail(1, { type: error.type, message: error.message, ...(error.param ? { param: error.param } : {}) });
    if (error instanceof Interrupted) return fail(130, { type: "interrupted", message: error.message });
    throw error;
  } finally {
    (interruption as { stop: () => void } | null)?.stop();
    await (services as Services | null)?.close();
  }
}
