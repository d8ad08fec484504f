// `warden admin import`: accounts, devices and every source of access from an NDJSON
// file, for vendors moving from another provider. The whole file is checked first, each
// line against import-line.schema.json and then against the workspace and what is
// stored; every bad line is reported, and only a file with none is written, in one
// transaction, so a failed import leaves nothing behind.
import { readFile } from "node:fs/promises";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { countSeats, findLicenceById, insertLicence, type Licence, type LicenceStatus } from "../billing/licence.store.js";
import { findSubscription, insertSubscription, type Subscription, type SubscriptionStatus } from "../billing/subscription.store.js";
import { type Clock, toIso } from "../clock.js";
import { syncCustomer, toolScope, toolsOfProduct } from "../customers/customer.service.js";
import type { ToolScope } from "../customers/customer.store.js";
import { type Device, insertDevice } from "../customers/device.store.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import { ensurePerson, findPersonByEmail, markPersonSignedIn } from "../customers/person.store.js";
import type { Db, Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import { ApiError, invalidParameter } from "../errors/errors.js";
import { insertGrant, listGrantsOf, type StoredGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace.service.js";
import { bundleExists, findPlan, findTool } from "../workspaces/workspace.store.js";
import lineSchema from "./import-line.schema.json" with { type: "json" };

const ajv = new Ajv2020({ allErrors: false, verbose: true });
addFormats.default(ajv);
const validateLine = ajv.compile<ImportLine>(lineSchema);

// The shape of a line once the schema has accepted it (import-line.schema.json is the contract).
interface AccountLine {
  type: "account";
  email: string;
  signed_in_at: string;
  tools?: string[];
}
interface DeviceLine {
  type: "device";
  email: string;
  tool: string;
  name: string;
  platform?: string | null;
  created_at: string;
  last_active_at?: string | null;
  signed_out_at?: string | null;
  licence?: string | null;
}
interface LicenceLine {
  type: "licence";
  id?: string;
  email: string;
  tool?: string;
  bundle?: string;
  plan?: string | null;
  status?: LicenceStatus;
  purchased_at: string;
  amount_cents?: number | null;
  currency?: string | null;
  payment_intent?: string | null;
  checkout_session?: string | null;
  seats?: number;
  team_licence?: string;
  team_subscription?: string;
}
interface SubscriptionLine {
  type: "subscription";
  id: string;
  email: string;
  tool?: string;
  bundle?: string;
  plan?: string | null;
  status: SubscriptionStatus;
  started_at?: string;
  current_period_start: string;
  current_period_end: string;
  cancel_at_period_end?: boolean;
  cancel_at?: string | null;
  ended_at?: string | null;
  seats?: number;
}
interface GrantLine {
  type: "trial" | "grant";
  email: string;
  tool: string;
  starts_at: string;
  ends_at?: string | null;
  revoked_at?: string | null;
  note?: string | null;
}
type ImportLine = AccountLine | DeviceLine | LicenceLine | SubscriptionLine | GrantLine;

interface ImportCounts {
  accounts: number;
  devices: number;
  licences: number;
  subscriptions: number;
  trials: number;
  grants: number;
}

export interface LineProblem {
  /** 1-based, counting blank lines, as an editor shows it. */
  line: number;
  message: string;
}

/** The file had bad lines; nothing was written. The message lists every one. */
export class ImportRejected extends ApiError {
  readonly problems: readonly LineProblem[];

  constructor(problems: LineProblem[]) {
    const lines = new Set(problems.map((p) => p.line)).size;
    const list = problems.map((p) => `line ${p.line}: ${p.message}`).join("\n");
    super("invalid_parameter", `FILE has ${lines} bad line${lines === 1 ? "" : "s"}; nothing was imported.\n${list}`, { param: "FILE" });
    this.problems = problems;
  }
}

function describeSchemaErrors(errors: readonly ErrorObject[], lineType: unknown): string {
  // Cross-field rules (exactly one of tool or bundle, what a seat may not carry) carry
  // their own explanation as the description of the failing schema node.
  const explained = errors.find((e) => (e.keyword === "oneOf" || e.keyword === "not") && typeof e.parentSchema?.description === "string");
  if (explained) return explained.parentSchema?.description as string;
  const error = errors.find((e) => e.keyword !== "if") ?? errors[0];
  if (!error) return "does not match the import format";
  const field = error.instancePath.slice(1).replaceAll("/", ".");
  switch (error.keyword) {
    case "required":
      return `missing field "${error.params.missingProperty}"`;
    case "additionalProperties":
      return `unknown field "${error.params.additionalProperty}" for a ${String(lineType)} line`;
    case "enum":
      return `${field} must be one of ${(error.params.allowedValues as unknown[]).join(", ")}`;
    case "format":
      return `${field} must be an ISO 8601 date-time with a time zone, such as 2026-11-21T12:00:00.000Z`;
    case "pattern":
      return typeof error.parentSchema?.description === "string" ? `${field} is not valid: ${error.parentSchema.description}` : `${field} ${error.message}`;
    case "type":
      return field === "" ? "a line must be a JSON object" : `${field} must be ${String(error.params.type).replace(",", " or ")}`;
    default:
      return `${field} ${error.message}`;
  }
}

interface Product {
  kind: ProductKind;
  id: string;
  toolIds: string[];
}

/** A team purchase that seats can refer to: on an earlier line or stored. */
interface Team {
  product: Product;
  planId: string | null;
  seats: number;
  seatsInUse: number;
}

type Write =
  | { kind: "account"; email: string; signedInAt: number; toolIds: string[] }
  | { kind: "device"; email: string; device: Omit<Device, "workspaceId" | "env" | "personId"> }
  | { kind: "licence"; email: string; licence: Omit<Licence, "workspaceId" | "env" | "personId">; toolIds: string[] }
  | { kind: "subscription"; email: string; subscription: Omit<Subscription, "workspaceId" | "env" | "personId">; toolIds: string[] }
  | { kind: "grant"; email: string; grant: Omit<StoredGrant, "email" | "personId"> };

/**
 * Checks every line against the workspace and what is stored, in file order, so that a
 * seat can refer to a team purchase on an earlier line. A line with a problem still
 * registers what it defines, so that one mistake is not reported again on every line
 * that refers to it.
 */
class FileCheck {
  readonly problems: LineProblem[] = [];
  readonly writes: Write[] = [];
  private line = 0;
  private readonly products = new Map<string, Product | null>();
  private readonly plans = new Map<string, Awaited<ReturnType<typeof findPlan>>>();
  private readonly accounts = new Map<string, number>();
  private readonly licences = new Map<string, number>();
  private readonly subscriptions = new Map<string, number>();
  private readonly teams = new Map<string, Team | null>();
  /** Line of each trial by normalised address and tool: a person has one trial per tool. */
  private readonly trials = new Map<string, number>();

  constructor(
    private readonly ex: Executor,
    private readonly workspaceId: string,
    private readonly env: Env,
    private readonly now: number,
  ) {}

  private bad(message: string): void {
    this.problems.push({ line: this.line, message });
  }

  async check(line: number, value: ImportLine): Promise<void> {
    this.line = line;
    const before = this.problems.length;
    this.email(value.email);
    let write: Write | null;
    switch (value.type) {
      case "account":
        write = await this.account(value);
        break;
      case "device":
        write = await this.device(value);
        break;
      case "licence":
        write = await this.licence(value);
        break;
      case "subscription":
        write = await this.subscription(value);
        break;
      case "trial":
      case "grant":
        write = await this.grant(value);
        break;
    }
    if (write && this.problems.length === before) this.writes.push(write);
  }

  private email(email: string): void {
    if (!isEmailShape(email)) this.bad(`email "${email}" is not an email address such as person@example.com`);
  }

  private time(field: string, value: string): number {
    const ms = Date.parse(value);
    // The schema's date-time admits a leap second, which Date cannot hold.
    if (!Number.isFinite(ms)) this.bad(`${field} "${value}" is not a time this service can read; write it like 2026-11-21T12:00:00.000Z`);
    return ms;
  }

  private optionalTime(field: string, value: string | null | undefined): number | null {
    return value === undefined || value === null ? null : this.time(field, value);
  }

  private notFuture(field: string, ms: number | null): void {
    if (ms !== null && ms > this.now) this.bad(`${field} ${toIso(ms)} is in the future (now is ${toIso(this.now)})`);
  }

  private notBefore(field: string, ms: number | null, otherField: string, other: number): void {
    if (ms !== null && ms < other) this.bad(`${field} ${toIso(ms)} is before ${otherField} ${toIso(other)}`);
  }

  private async product(kind: ProductKind, id: string): Promise<Product | null> {
    const key = `${kind}:${id}`;
    if (!this.products.has(key)) {
      const exists = kind === "tool" ? (await findTool(this.ex, this.workspaceId, id)) !== null : await bundleExists(this.ex, this.workspaceId, id);
      this.products.set(key, exists ? { kind, id, toolIds: await toolsOfProduct(this.ex, this.workspaceId, kind, id) } : null);
    }
    const product = this.products.get(key) ?? null;
    if (!product) this.bad(`no ${kind} "${id}" in this workspace`);
    return product;
  }

  private async productOf(line: { tool?: string; bundle?: string }): Promise<Product | null> {
    return line.bundle !== undefined ? this.product("bundle", line.bundle) : this.product("tool", line.tool ?? "");
  }

  private async plan(product: Product, planId: string | null | undefined, billing: "one_time" | "subscription"): Promise<string | null> {
    if (planId === undefined || planId === null) return null;
    const key = `${product.kind}:${product.id}:${planId}`;
    if (!this.plans.has(key)) this.plans.set(key, await findPlan(this.ex, this.workspaceId, product.kind, product.id, planId));
    const plan = this.plans.get(key);
    if (!plan) this.bad(`no plan "${planId}" for ${product.kind} "${product.id}"`);
    else if (plan.billing !== billing)
      this.bad(`plan "${planId}" is billed ${plan.billing}; a ${billing === "one_time" ? "licence" : "subscription"} needs a ${billing} plan`);
    return planId;
  }

  private async account(line: AccountLine): Promise<Write | null> {
    const signedInAt = this.time("signed_in_at", line.signed_in_at);
    this.notFuture("signed_in_at", signedInAt);
    const earlier = this.accounts.get(normaliseEmail(line.email));
    if (earlier !== undefined) this.bad(`the account of ${line.email} is already on line ${earlier}; list all its tools on one line`);
    else this.accounts.set(normaliseEmail(line.email), this.line);
    const toolIds = line.tools ?? [];
    for (const toolId of toolIds) await this.product("tool", toolId);
    return { kind: "account", email: line.email, signedInAt, toolIds };
  }

  private async device(line: DeviceLine): Promise<Write | null> {
    await this.product("tool", line.tool);
    const createdAt = this.time("created_at", line.created_at);
    const lastActiveAt = this.optionalTime("last_active_at", line.last_active_at);
    const signedOutAt = this.optionalTime("signed_out_at", line.signed_out_at);
    this.notFuture("created_at", createdAt);
    this.notFuture("last_active_at", lastActiveAt);
    this.notFuture("signed_out_at", signedOutAt);
    this.notBefore("last_active_at", lastActiveAt, "created_at", createdAt);
    this.notBefore("signed_out_at", signedOutAt, "created_at", createdAt);
    const licenceId = line.licence ?? null;
    if (licenceId !== null && !this.licences.has(licenceId)) {
      const stored = await findLicenceById(this.ex, licenceId);
      if (!stored || stored.workspaceId !== this.workspaceId || stored.env !== this.env) {
        this.bad(`licence ${licenceId} is neither on an earlier line nor stored in this environment`);
      }
    }
    return {
      kind: "device",
      email: line.email,
      device: {
        id: newId("dev"),
        toolId: line.tool,
        licenceId,
        name: line.name,
        platform: line.platform ?? null,
        createdAt,
        lastActiveAt,
        signedOutAt,
      },
    };
  }

  private async team(field: "team_licence" | "team_subscription", id: string): Promise<Team | null> {
    const key = `${field}:${id}`;
    if (!this.teams.has(key)) {
      const scope = { workspaceId: this.workspaceId, env: this.env };
      let team: Team | null = null;
      if (field === "team_licence") {
        const stored = await findLicenceById(this.ex, id);
        if (stored && stored.workspaceId === this.workspaceId && stored.env === this.env && (stored.seats ?? 0) > 0) {
          team = {
            product: {
              kind: stored.productKind,
              id: stored.productId,
              toolIds: await toolsOfProduct(this.ex, this.workspaceId, stored.productKind, stored.productId),
            },
            planId: stored.planId,
            seats: stored.seats ?? 0,
            seatsInUse: await countSeats(this.ex, scope, { teamLicenceId: id }),
          };
        }
      } else {
        const stored = await findSubscription(this.ex, scope, id);
        if (stored && (stored.seats ?? 0) > 0) {
          team = {
            product: {
              kind: stored.productKind,
              id: stored.productId,
              toolIds: await toolsOfProduct(this.ex, this.workspaceId, stored.productKind, stored.productId),
            },
            planId: stored.planId,
            seats: stored.seats ?? 0,
            seatsInUse: await countSeats(this.ex, scope, { teamSubscriptionId: id }),
          };
        }
      }
      this.teams.set(key, team);
    }
    const team = this.teams.get(key) ?? null;
    if (!team) {
      const what = field === "team_licence" ? "team licence (a licence with seats)" : "team subscription (a subscription with seats)";
      this.bad(`${field} ${id} is not a ${what} on an earlier line or stored in this environment`);
    }
    return team;
  }

  private async licence(line: LicenceLine): Promise<Write | null> {
    const purchasedAt = this.time("purchased_at", line.purchased_at);
    this.notFuture("purchased_at", purchasedAt);
    const status = line.status ?? "active";

    const id = line.id ?? newId("lic");
    if (line.id !== undefined) {
      const earlier = this.licences.get(line.id);
      if (earlier !== undefined) this.bad(`licence id ${line.id} is already on line ${earlier}`);
      else if (await findLicenceById(this.ex, line.id)) this.bad(`licence id ${line.id} exists already`);
    }
    if (!this.licences.has(id)) this.licences.set(id, this.line);

    const teamField = line.team_licence !== undefined ? "team_licence" : line.team_subscription !== undefined ? "team_subscription" : null;
    let product: Product | null;
    let planId: string | null;
    if (teamField) {
      const teamId = line.team_licence ?? line.team_subscription ?? "";
      const team = await this.team(teamField, teamId);
      if (!team) return null;
      if (status !== "revoked") {
        if (team.seatsInUse >= team.seats) this.bad(`${teamField} ${teamId} has ${team.seats} seat${team.seats === 1 ? "" : "s"}, all in use`);
        team.seatsInUse += 1;
      }
      product = team.product;
      planId = team.planId;
    } else {
      product = await this.productOf(line);
      if (!product) return null;
      planId = await this.plan(product, line.plan, "one_time");
      if (line.seats !== undefined && !this.teams.get(`team_licence:${id}`)) {
        this.teams.set(`team_licence:${id}`, { product, planId, seats: line.seats, seatsInUse: 0 });
      }
    }

    return {
      kind: "licence",
      email: line.email,
      toolIds: product.toolIds,
      licence: {
        id,
        productKind: product.kind,
        productId: product.id,
        planId,
        status,
        purchasedAt,
        amountCents: line.amount_cents ?? null,
        currency: line.currency?.toLowerCase() ?? null,
        paymentIntent: line.payment_intent ?? null,
        checkoutSession: line.checkout_session ?? null,
        seats: line.seats ?? null,
        teamLicenceId: line.team_licence ?? null,
        teamSubscriptionId: line.team_subscription ?? null,
        createdAt: purchasedAt,
      },
    };
  }

  private async subscription(line: SubscriptionLine): Promise<Write | null> {
    const periodStart = this.time("current_period_start", line.current_period_start);
    const periodEnd = this.time("current_period_end", line.current_period_end);
    const startedAt = line.started_at === undefined ? periodStart : this.time("started_at", line.started_at);
    const cancelAt = this.optionalTime("cancel_at", line.cancel_at);
    const endedAt = this.optionalTime("ended_at", line.ended_at);
    this.notFuture("started_at", startedAt);
    this.notFuture("ended_at", endedAt);
    if (periodEnd <= periodStart) this.bad(`current_period_end ${line.current_period_end} is not after current_period_start ${line.current_period_start}`);
    this.notBefore("current_period_start", periodStart, "started_at", startedAt);
    this.notBefore("ended_at", endedAt, "started_at", startedAt);
    this.notBefore("cancel_at", cancelAt, "started_at", startedAt);

    const earlier = this.subscriptions.get(line.id);
    if (earlier !== undefined) this.bad(`subscription ${line.id} is already on line ${earlier}`);
    else if (await findSubscription(this.ex, { workspaceId: this.workspaceId, env: this.env }, line.id)) this.bad(`subscription ${line.id} exists already`);
    if (earlier === undefined) this.subscriptions.set(line.id, this.line);

    const product = await this.productOf(line);
    if (!product) return null;
    const planId = await this.plan(product, line.plan, "subscription");
    if (line.seats !== undefined && earlier === undefined) {
      this.teams.set(`team_subscription:${line.id}`, { product, planId, seats: line.seats, seatsInUse: 0 });
    }
    return {
      kind: "subscription",
      email: line.email,
      toolIds: product.toolIds,
      subscription: {
        id: line.id,
        productKind: product.kind,
        productId: product.id,
        planId,
        status: line.status,
        currentPeriodStart: periodStart,
        currentPeriodEnd: periodEnd,
        cancelAtPeriodEnd: line.cancel_at_period_end ?? false,
        cancelAt,
        endedAt,
        seats: line.seats ?? null,
        createdAt: startedAt,
      },
    };
  }

  private async oneTrial(email: string, toolId: string): Promise<void> {
    const key = `${normaliseEmail(email)} ${toolId}`;
    const earlier = this.trials.get(key);
    if (earlier !== undefined) return this.bad(`a second trial of ${toolId} for ${email} (line ${earlier} has one); a person has one trial per tool`);
    this.trials.set(key, this.line);
    const person = await findPersonByEmail(this.ex, this.workspaceId, this.env, email);
    if (person && (await listGrantsOf(this.ex, toolId, person.id)).some((g) => g.kind === "trial")) {
      this.bad(`${email} has a trial of ${toolId} already; a person has one trial per tool`);
    }
  }

  private async grant(line: GrantLine): Promise<Write | null> {
    await this.product("tool", line.tool);
    const startsAt = this.time("starts_at", line.starts_at);
    const endsAt = this.optionalTime("ends_at", line.ends_at);
    const revokedAt = this.optionalTime("revoked_at", line.revoked_at);
    this.notFuture("starts_at", startsAt);
    this.notFuture("revoked_at", revokedAt);
    if (endsAt !== null && endsAt <= startsAt) this.bad(`ends_at ${toIso(endsAt)} is not after starts_at ${toIso(startsAt)}`);
    this.notBefore("revoked_at", revokedAt, "starts_at", startsAt);
    if (line.type === "trial") await this.oneTrial(line.email, line.tool);
    return {
      kind: "grant",
      email: line.email,
      grant: {
        id: newId("gr"),
        toolId: line.tool,
        kind: line.type,
        startsAt,
        endsAt,
        revokedAt,
        note: line.note ?? null,
        createdAt: startsAt,
      },
    };
  }
}

/** Splits NDJSON into numbered values, reporting lines that are not JSON or not a line of the format. */
function parseLines(text: string, problems: LineProblem[]): { line: number; value: ImportLine }[] {
  const parsed: { line: number; value: ImportLine }[] = [];
  const rows = text.replace(/^\uFEFF/, "").split("\n");
  rows.forEach((raw, index) => {
    const line = index + 1;
    const source = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (source.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      problems.push({ line, message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    if (!validateLine(value)) {
      const lineType = typeof value === "object" && value !== null && "type" in value ? value.type : undefined;
      problems.push({ line, message: describeSchemaErrors(validateLine.errors ?? [], lineType) });
      return;
    }
    parsed.push({ line, value });
  });
  return parsed;
}

async function writeAll(trx: Executor, workspaceId: string, env: Env, now: number, writes: readonly Write[]): Promise<ImportCounts> {
  const counts: ImportCounts = { accounts: 0, devices: 0, licences: 0, subscriptions: 0, trials: 0, grants: 0 };
  const people = new Map<string, string>();
  const personOf = async (email: string): Promise<string> => {
    const key = normaliseEmail(email);
    let id = people.get(key);
    if (id === undefined) {
      id = (await ensurePerson(trx, workspaceId, env, email, now)).id;
      people.set(key, id);
    }
    return id;
  };
  // Every (tool, person) a line changes is synced once, after all sources are in, so a
  // seat and its team purchase are summarised together.
  const touched = new Map<string, { toolId: string; personId: string; signedInAt: number | undefined }>();
  const touch = (toolId: string, personId: string, signedInAt?: number) => {
    const key = `${toolId}\u0000${personId}`;
    const earlier = touched.get(key)?.signedInAt;
    const first = earlier === undefined ? signedInAt : signedInAt === undefined ? earlier : Math.min(earlier, signedInAt);
    touched.set(key, { toolId, personId, signedInAt: first });
  };

  for (const write of writes) {
    const personId = await personOf(write.email);
    const scope = { workspaceId, env, personId };
    switch (write.kind) {
      case "account":
        await markPersonSignedIn(trx, personId, write.signedInAt);
        for (const toolId of write.toolIds) touch(toolId, personId, write.signedInAt);
        counts.accounts += 1;
        break;
      case "device":
        await insertDevice(trx, { ...write.device, ...scope });
        counts.devices += 1;
        break;
      case "licence":
        await insertLicence(trx, { ...write.licence, ...scope });
        for (const toolId of write.toolIds) touch(toolId, personId);
        counts.licences += 1;
        break;
      case "subscription":
        await insertSubscription(trx, { ...write.subscription, ...scope });
        for (const toolId of write.toolIds) touch(toolId, personId);
        counts.subscriptions += 1;
        break;
      case "grant":
        await insertGrant(trx, { ...write.grant, ...scope });
        touch(write.grant.toolId, personId);
        if (write.grant.kind === "trial") counts.trials += 1;
        else counts.grants += 1;
        break;
    }
  }

  const scopes = new Map<string, ToolScope>();
  for (const { toolId, personId, signedInAt } of touched.values()) {
    let scope = scopes.get(toolId);
    if (!scope) {
      scope = toolScope(workspaceId, env, toolId);
      scopes.set(toolId, scope);
    }
    await syncCustomer(trx, scope, personId, now, signedInAt);
  }
  return counts;
}

/**
 * Imports NDJSON text into a workspace environment. Throws ImportRejected, listing every
 * bad line, when any line is bad; then nothing is written. Imports are an operator's act:
 * they are not counted against the API's additions limit or a Hobby workspace's passes.
 */
export async function importNdjson(db: Db, clock: Clock, input: { workspace: string; env: string; text: string }): Promise<ImportCounts> {
  const workspace = await requireWorkspace(db, input.workspace);
  const env = requireEnv(input.env);
  const problems: LineProblem[] = [];
  const lines = parseLines(input.text, problems);
  if (lines.length === 0 && problems.length === 0) throw invalidParameter("FILE", "FILE holds no lines to import.");

  // Checked inside the transaction that writes, so what was checked is what is written on.
  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    const check = new FileCheck(trx, workspace.id, env, now);
    for (const { line, value } of lines) await check.check(line, value);
    problems.push(...check.problems);
    if (problems.length > 0) throw new ImportRejected(problems.sort((a, b) => a.line - b.line));
    return writeAll(trx, workspace.id, env, now, check.writes);
  });
}

/** Reads an NDJSON file and imports it (see importNdjson). */
export async function importFile(db: Db, clock: Clock, input: { workspace: string; env: string; path: string }): Promise<ImportCounts> {
  let text: string;
  try {
    text = await readFile(input.path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw invalidParameter("FILE", `Cannot read ${input.path}: ${reason}.`);
  }
  return importNdjson(db, clock, { workspace: input.workspace, env: input.env, text });
}
