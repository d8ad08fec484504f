// `warden admin import`: accounts, devices and every source of access from an NDJSON
// file, for vendors moving from another provider. The file is read twice as a stream:
// the first pass checks every line (import.check.ts) and reports every bad one; only a
// file with none is written, by the second pass, in batches, all in one transaction
// together with the check, so a failed or interrupted import leaves nothing behind
// (docs/decisions.md, "Import: one transaction").
import { setImmediate as nextTurn } from "node:timers/promises";
import { insertLicences } from "../billing/licence.store.js";
import { insertSubscriptions } from "../billing/subscription.store.js";
import type { Clock } from "../clock.js";
import { syncCustomers, toolScope } from "../customers/customer.service.js";
import { insertDevices } from "../customers/device.store.js";
import { normaliseEmail } from "../customers/email.js";
import { ensurePeople } from "../customers/person.store.js";
import { type Db, type Executor, holdWriteLock } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { refreshPlannerStatistics } from "../db/statistics.store.js";
import { ApiError, invalidParameter } from "../errors/errors.js";
import { insertGrants } from "../grants/grant.store.js";
import { recordSubscriptionMrr } from "../insights/rollup.store.js";
import { type CreditRow, insertCredits } from "../usage/credits.store.js";
import { insertUsed } from "../usage/usage.store.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { FileCheck, type Write } from "./import.check.js";
import { type ImportLine, type LineProblem, parseLine } from "./import-line.js";
import type { MeterWrites } from "./import-meters.js";
import { fileSource, LinePass, type NdjsonSource, textSource } from "./ndjson-reader.js";
import { loadStoredState } from "./stored-state.js";

export type { LineProblem } from "./import-line.js";

/**
 * Lines checked and written a batch at a time: one batch's text, values and rows are
 * what the import holds, and each batch is a few multi-row statements (a licence has 17
 * columns: 17,000 parameters, under SQLite's 32,766 and PostgreSQL's 65,535).
 */
const BATCH_LINES = 1_000;
/** Meter rows (used, credits) a statement writes at most: 12 columns, 24,000 parameters. */
const METER_ROWS = 2_000;
/** The tables an import writes to, as their statistics are taken again after its first batch. */
const WRITTEN_TABLES = ["people", "licences", "subscriptions", "grants", "devices", "customers", "meter_usage", "meter_credits"] as const;

/** Bad lines listed at most; the rest are counted. A file of a million bad lines would otherwise be held whole. */
const MAX_PROBLEMS = 1_000;

export interface ImportCounts {
  accounts: number;
  devices: number;
  licences: number;
  subscriptions: number;
  trials: number;
  grants: number;
  /** Credit entries written: one per meter of a line's `credits`, or of the pack a licence line brings without them. */
  credits: number;
  /** Counters of units used written: one per meter of a line's `used` above 0. */
  used: number;
}

export interface ImportSummary extends ImportCounts {
  /** Lines stored already as they are (a second import of the same file): not written again. */
  unchanged: number;
}

export interface ImportProgress {
  /** `check` reads every line first; `write` reads them again and writes them. */
  phase: "check" | "write";
  /** Lines of the file read in this phase, blank ones included. */
  lines: number;
  /** Lines of the file in all: known once the check has read them. */
  totalLines: number | null;
  bytes: number;
  totalBytes: number;
  /** Lines written so far (write phase). */
  written: number;
  /** Lines found stored as they are, skipped (known after the check). */
  unchanged: number;
}

export interface ImportOptions {
  /** Called after every batch of lines. */
  onProgress?: (progress: ImportProgress) => void;
  /** Aborted (Ctrl-C): the import stops after the batch at hand and rolls back. */
  signal?: AbortSignal;
}

/** The file had bad lines; nothing was written. The message lists them (the first MAX_PROBLEMS). */
export class ImportRejected extends ApiError {
  readonly problems: readonly LineProblem[];

  constructor(name: string, problems: LineProblem[], badLines: number) {
    const listed = new Set(problems.map((p) => p.line)).size;
    const list = problems.map((p) => `line ${p.line}: ${p.message}`).join("\n");
    const more = badLines > listed ? `\n… and ${badLines - listed} more bad lines.` : "";
    super("invalid_parameter", `${name} has ${badLines} bad line${badLines === 1 ? "" : "s"}; nothing was imported.\n${list}${more}`, { param: "FILE" });
    this.problems = problems;
  }
}

/** The import was stopped (Ctrl-C) and rolled back. */
export class ImportInterrupted extends Error {
  constructor() {
    super("Interrupted: the import was rolled back; nothing was imported.");
    this.name = "ImportInterrupted";
  }
}

const zeroCounts = (): ImportCounts => ({ accounts: 0, devices: 0, licences: 0, subscriptions: 0, trials: 0, grants: 0, credits: 0, used: 0 });

async function betweenBatches(signal: AbortSignal | undefined): Promise<void> {
  // better-sqlite3 answers synchronously: without a turn of the event loop a SIGINT
  // would not be seen (nor a progress bar drawn) until the import ended.
  await nextTurn();
  if (signal?.aborted) throw new ImportInterrupted();
}

/** One batch of lines written: people first, then sources, then each touched customer row. */
async function writeBatch(trx: Executor, workspaceId: string, env: Env, now: number, writes: readonly Write[], counts: ImportCounts): Promise<void> {
  const people = await ensurePeople(
    trx,
    workspaceId,
    env,
    writes.map((w) => ({ email: w.email, signedInAt: w.kind === "account" ? w.signedInAt : null })),
    now,
  );
  const personOf = (email: string): string => {
    const person = people.get(normaliseEmail(email));
    if (!person) throw new Error("person missing right after it was written");
    return person.id;
  };
  // Every (tool, person) a line changes is synced once per batch, after the batch's
  // sources are in, so a seat and its team purchase are summarised together. A person
  // touched again in a later batch is synced again from what is stored: the same row.
  const touched = new Map<string, Map<string, number | undefined>>();
  const touch = (toolId: string, personId: string, signedInAt?: number) => {
    const people = touched.get(toolId) ?? new Map<string, number | undefined>();
    touched.set(toolId, people);
    const earlier = people.get(personId);
    people.set(personId, earlier === undefined ? signedInAt : signedInAt === undefined ? earlier : Math.min(earlier, signedInAt));
  };

  const scope = (email: string) => ({ workspaceId, env, personId: personOf(email) });
  const subscriptions = [];
  const licences = [];
  const grants = [];
  const devices = [];
  const used: Parameters<typeof insertUsed>[1][number][] = [];
  const credits: CreditRow[] = [];
  const meters = (m: MeterWrites, email: string) => {
    const personId = personOf(email);
    for (const u of m.used) used.push({ ...u, workspaceId, env, personId });
    for (const c of m.credits) credits.push({ ...c, personId });
    counts.used += m.used.length;
    counts.credits += m.credits.length;
  };
  for (const write of writes) {
    const personId = personOf(write.email);
    switch (write.kind) {
      case "account":
        for (const toolId of write.toolIds) touch(toolId, personId, write.signedInAt);
        counts.accounts += 1;
        break;
      case "device":
        devices.push({ ...write.device, ...scope(write.email) });
        counts.devices += 1;
        break;
      case "licence":
        licences.push({ ...write.licence, ...scope(write.email) });
        meters(write.meters, write.email);
        for (const toolId of write.toolIds) touch(toolId, personId);
        counts.licences += 1;
        break;
      case "subscription":
        subscriptions.push({ ...write.subscription, ...scope(write.email) });
        meters(write.meters, write.email);
        for (const toolId of write.toolIds) touch(toolId, personId);
        counts.subscriptions += 1;
        break;
      case "grant":
        grants.push({ ...write.grant, ...scope(write.email) });
        meters(write.meters, write.email);
        touch(write.grant.toolId, personId);
        if (write.grant.kind === "trial") counts.trials += 1;
        else counts.grants += 1;
        break;
    }
  }
  await insertSubscriptions(trx, subscriptions);
  for (const sub of subscriptions) await recordSubscriptionMrr(trx, { ...sub, endedAt: sub.endedAt ?? null, seats: sub.seats ?? null }, sub.createdAt);
  await insertLicences(trx, licences);
  await insertGrants(trx, grants);
  await insertDevices(trx, devices);
  // A line may carry several meters: these go in slices, under the engines' parameter limits.
  for (let i = 0; i < used.length; i += METER_ROWS) await insertUsed(trx, used.slice(i, i + METER_ROWS));
  for (let i = 0; i < credits.length; i += METER_ROWS) await insertCredits(trx, credits.slice(i, i + METER_ROWS));
  for (const [toolId, people] of touched) {
    const signedIn = new Map([...people].filter((entry): entry is [string, number] => entry[1] !== undefined));
    await syncCustomers(trx, toolScope(workspaceId, env, toolId), [...people.keys()], now, signedIn);
  }
}

/**
 * Imports NDJSON into a workspace environment. Throws ImportRejected, listing the bad
 * lines, when any line is bad, ImportInterrupted when `signal` aborts; either way nothing
 * is written. Imports are an operator's act: they are not counted against the API's
 * additions limit or a Hobby workspace's passes.
 */
async function importSource(
  db: Db,
  clock: Clock,
  input: { workspace: string; env: string; source: NdjsonSource },
  options: ImportOptions,
): Promise<ImportSummary> {
  const workspace = await requireWorkspace(db, input.workspace);
  const env = requireEnv(input.env);
  const { source } = input;
  const { onProgress, signal } = options;

  return db.transaction().execute(async (trx) => {
    // Checked inside the transaction that writes, so what was checked is what is written on.
    await holdWriteLock(trx);
    const now = clock.now();
    const scope = { workspaceId: workspace.id, env };
    const check = new FileCheck(trx, workspace.id, env, now, MAX_PROBLEMS);
    const first = new LinePass(source);
    let lines = 0;
    for await (const batch of first.batches(BATCH_LINES)) {
      const parsed: { line: number; value: ImportLine }[] = [];
      for (const { line, text } of batch) {
        const result = parseLine(text);
        if ("problem" in result) check.refuse(line, result.problem);
        else parsed.push({ line, value: result.value });
      }
      await check.checkBatch(
        parsed,
        await loadStoredState(
          trx,
          scope,
          parsed.map((p) => p.value),
        ),
      );
      lines += batch.length;
      onProgress?.({
        phase: "check",
        lines: first.lines,
        totalLines: null,
        bytes: first.bytes,
        totalBytes: source.size,
        written: 0,
        unchanged: check.unchanged.size,
      });
      await betweenBatches(signal);
    }
    if (check.badLines > 0)
      throw new ImportRejected(
        source.name,
        [...check.problems].sort((a, b) => a.line - b.line),
        check.badLines,
      );
    if (lines === 0) throw invalidParameter("FILE", `${source.name} holds no lines to import.`);

    const counts = zeroCounts();
    const second = new LinePass(source);
    let written = 0;
    const changed = () => invalidParameter("FILE", `${source.name} changed while it was imported; nothing was imported.`);
    for await (const batch of second.batches(BATCH_LINES)) {
      const writes: Write[] = [];
      for (const { line, text } of batch) {
        if (check.unchanged.has(line)) continue;
        const result = parseLine(text);
        if ("problem" in result) throw changed();
        writes.push(check.toWrite(result.value));
      }
      await writeBatch(trx, workspace.id, env, now, writes, counts);
      // After the first batch, so that the later ones are planned for tables this size.
      if (written === 0 && writes.length > 0) await refreshPlannerStatistics(trx, WRITTEN_TABLES);
      written += writes.length;
      onProgress?.({
        phase: "write",
        lines: second.lines,
        totalLines: first.lines,
        bytes: second.bytes,
        totalBytes: source.size,
        written,
        unchanged: check.unchanged.size,
      });
      await betweenBatches(signal);
    }
    if (second.digest() !== first.digest()) throw changed();
    return { ...counts, unchanged: check.unchanged.size };
  });
}

/** Imports NDJSON text (see importSource). */
export async function importNdjson(
  db: Db,
  clock: Clock,
  input: { workspace: string; env: string; text: string },
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return importSource(db, clock, { workspace: input.workspace, env: input.env, source: textSource(input.text) }, options);
}

/** Reads an NDJSON file as a stream and imports it (see importSource). */
export async function importFile(
  db: Db,
  clock: Clock,
  input: { workspace: string; env: string; path: string },
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return importSource(db, clock, { workspace: input.workspace, env: input.env, source: await fileSource(input.path) }, options);
}
