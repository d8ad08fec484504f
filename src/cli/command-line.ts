// How `warden` reads its arguments: which command or group they name, the command's
// options (node's parseArgs, its errors told in Warden's words), and the lists that
// help and a wrong command show.
import { parseArgs } from "node:util";
import type { Command, Values } from "./command.js";

/** Bad arguments: the command did not run (exit code 2). */
export class UsageError extends Error {}

/** A command's entry in a list: its usage, then what it does. */
export function describeCommand(command: Command): string {
  return `  ${command.usage}\n      ${command.summary}`;
}

/** The commands whose names begin with the group's words (`admin`, `admin owner`, `endpoints`…). */
export function commandsOf(commands: Record<string, Command>, group: string): Command[] {
  return Object.entries(commands)
    .filter(([name]) => name.startsWith(`${group} `))
    .map(([, command]) => command);
}

export type Resolved = { kind: "command"; name: string; rest: string[] } | { kind: "group"; group: string; rest: string[] } | { kind: "unknown" };

/**
 * The longest command name the arguments start with; failing that, the longest group
 * (the first words of some command's name), with what follows it.
 */
export function resolve(commands: Record<string, Command>, argv: string[]): Resolved {
  const words = argv.findIndex((a) => a.startsWith("-"));
  const leading = words === -1 ? argv.length : words;
  for (let n = Math.min(leading, 4); n >= 1; n--) {
    const name = argv.slice(0, n).join(" ");
    if (commands[name]) return { kind: "command", name, rest: argv.slice(n) };
  }
  for (let n = Math.min(leading, 3); n >= 1; n--) {
    const group = argv.slice(0, n).join(" ");
    if (commandsOf(commands, group).length > 0) return { kind: "group", group, rest: argv.slice(n) };
  }
  return { kind: "unknown" };
}

// parseArgs says "Unknown option '--x'" or "Option '--email <value>' argument missing";
// the option is the quoted word either way.
function optionIn(message: string): string {
  return /'(-[^' ]+)/.exec(message)?.[1] ?? "";
}

/** What node's parseArgs refused, in Warden's words, naming the command and where to read its options. */
function explain(error: Error & { code?: string }, name: string): string {
  const option = optionIn(error.message);
  const see = `see warden ${name} --help`;
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option} for "${name}"; ${see}.`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (/does not take an argument/.test(error.message)) return `option ${option} takes no value; ${see}.`;
      // "argument is ambiguous": the next word starts with '-', so it was taken for an option.
      if (/ambiguous/.test(error.message)) return `option ${option} needs a value (a value starting with "-" is written ${option}=-…); ${see}.`;
      return `option ${option} needs a value; ${see}.`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument for "${name}"; ${see}.`;
    default:
      return `${error.message}; ${see}.`;
  }
}

export function parseCommandLine(name: string, command: Command, rest: string[]): { values: Values; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) throw new UsageError(explain(error as Error, name));
    throw error;
  }
  const values = parsed.values as Values;
  for (const option of command.required ?? []) {
    if (typeof values[option] !== "string" || values[option] === "") throw new UsageError(`--${option} is required.`);
  }
  const [min, max] = Array.isArray(command.positionals) ? command.positionals : [command.positionals ?? 0, command.positionals ?? 0];
  if (parsed.positionals.length < min) throw new UsageError("Missing arguments.");
  if (parsed.positionals.length > max) throw new UsageError(`Unexpected arguments: ${parsed.positionals.slice(max).join(" ")}.`);
  return { values, positionals: parsed.positionals };
}
