import type { Clock } from "../clock.js";
import type { Services } from "../services.js";
import type { ProgressOutput } from "./progress.js";

export type Values = Record<string, string | boolean | undefined>;
export type CliEnv = Readonly<Record<string, string | undefined>>;

export interface CommandContext {
  values: Values;
  positionals: string[];
  env: CliEnv;
  /** Opens the database on first use (only admin commands need it). */
  services(): Promise<Services>;
  /** Where a long command says how far it has got (stderr). */
  progress: ProgressOutput;
  /** The clock of that progress (tests move it). */
  clock: Clock;
  /**
   * Aborted on the first Ctrl-C while the command runs; a command that asks for it must
   * stop cleanly and throw Interrupted. Commands that do not ask are ended by Ctrl-C.
   */
  interruption(): AbortSignal;
}

export interface CommandResult {
  json: unknown;
  text: string;
  /** Non-zero when the command ran but its outcome is a failure (a receiver's error status). */
  exitCode?: number;
}

export interface Command {
  usage: string;
  /** One line: what the command does, shown in its group's list and by --help. */
  summary: string;
  options: Record<string, { type: "string" | "boolean" }>;
  /** Names of options that must be given. */
  required?: string[];
  /** How many positional arguments: exactly this many, or [min, max]. */
  positionals?: number | [number, number];
  run(context: CommandContext): Promise<CommandResult>;
}

/** A failure reported by the service (or by the command) in the API's error shape. */
export class CliError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** The command stopped on Ctrl-C, having undone what it did (exit code 130, as a shell reports SIGINT). */
export class Interrupted extends Error {}

export const str = (values: Values, name: string) => values[name] as string;
export const optStr = (values: Values, name: string) => values[name] as string | undefined;
