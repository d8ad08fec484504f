// Seeds the benchmark workspace through Warden's own storage layer: the operator's use
// cases for the workspace, tools, bundle, plans and key; batched multi-row inserts for
// a million customers (one import line at a time would take hours). Each customer's
// `customers` row is derived with the service's own computeEntitlement, exactly as
// syncCustomer derives it, and verifySeed checks a sample against syncCustomer itself.
import { createHash } from "node:crypto";
import type { Insertable } from "kysely";
import { systemClock } from "../src/clock.js";
import { syncCustomer, toolScope } from "../src/customers/customer.service.js";
import { findCustomerRow } from "../src/customers/customer.store.js";
import { normaliseEmail } from "../src/customers/email.js";
import {
  computeEntitlement,
  type GrantSource,
  type LicenceSource,
  type PlanInfo,
  type Sources,
  type SubscriptionSource,
} from "../src/customers/entitlement.js";
import { findPersonByEmail } from "../src/customers/person.store.js";
import type { Storage, Trx } from "../src/db/database.js";
import type { CustomersTable, Database, DevicesTable, Env, GrantsTable, LicencesTable, PeopleTable, SubscriptionsTable } from "../src/db/schema.js";
import { refreshPlannerStatistics } from "../src/db/statistics.store.js";
import { newId } from "../src/ids.js";
import { NO_TERMS } from "../src/usage/usage.types.js";
import { createBundle, createKey, createOwner, createPlan, createTool, createWorkspace } from "../src/workspaces/workspace.service.js";
import { BENCH, type CustomerPlan, DAY, deviceTokenOf, emailOf, fraction, planCustomer } from "./customer-mix.js";

export interface BenchWorkspace {
  workspaceId: string;
  env: Env;
  /** The live API key (wk_live_…). */
  key: string;
}

const ENV: Env = "live";

/** Owner, pro workspace, two tools, a bundle of both, four plans and a live key. */
export async function setUpWorkspace(storage: Storage): Promise<BenchWorkspace> {
  const { db } = storage;
  const clock = systemClock;
  await createOwner(db, clock, { email: BENCH.ownerEmail });
  const workspace = await createWorkspace(db, clock, { slug: BENCH.workspace, name: "Benchmark", ownerEmail: BENCH.ownerEmail, plan: "pro" });
  await createTool(db, clock, { workspace: BENCH.workspace, id: BENCH.tool, name: "Tab Master" });
  await createTool(db, clock, { workspace: BENCH.workspace, id: BENCH.otherTool, name: "Link Keeper" });
  await createBundle(db, clock, { workspace: BENCH.workspace, id: BENCH.bundle, name: "Suite", toolIds: [BENCH.tool, BENCH.otherTool] });
  for (const plan of Object.values(BENCH.plans)) {
    await createPlan(db, clock, {
      workspace: BENCH.workspace,
      ...("tool" in plan ? { tool: plan.tool } : { bundle: plan.bundle }),
      id: plan.id,
      name: plan.name,
      billing: plan.billing,
      amountCents: plan.amountCents,
      currency: "eur",
      ...(plan.interval ? { interval: plan.interval } : {}),
    });
  }
  const key = await createKey(db, clock, { workspace: BENCH.workspace, env: ENV, name: "benchmark" });
  return { workspaceId: workspace.id, env: ENV, key: key.key };
}

type PlanKey = keyof typeof BENCH.plans;

function planInfo(key: PlanKey): PlanInfo {
  const plan = BENCH.plans[key];
  return { id: plan.id, name: plan.name, billing: plan.billing, amountCents: plan.amountCents, currency: "eur", interval: plan.interval };
}

/** The rows of one batch, per table. */
interface Batch {
  people: Insertable<PeopleTable>[];
  licences: Insertable<LicencesTable>[];
  subscriptions: Insertable<SubscriptionsTable>[];
  grants: Insertable<GrantsTable>[];
  devices: Insertable<DevicesTable>[];
  customers: Insertable<CustomersTable>[];
}

const emptyBatch = (): Batch => ({ people: [], licences: [], subscriptions: [], grants: [], devices: [], customers: [] });

/** Sources per tool of the workspace, as loadSources would read them back. */
interface ToolSources {
  tool: Sources;
  other: Sources;
}

class CustomerWriter {
  constructor(
    private readonly ws: BenchWorkspace,
    private readonly now: number,
    private readonly batch: Batch,
  ) {}

  add(c: CustomerPlan): void {
    const { workspaceId, env } = this.ws;
    const personId = newId("psn");
    const sources: ToolSources = { tool: { licences: [], subscriptions: [], grants: [] }, other: { licences: [], subscriptions: [], grants: [] } };
    const i = c.index;

    if (c.earlierTrial) this.grant(personId, sources, "trial", c.firstAt - 20 * DAY, c.firstAt - 6 * DAY, null);
    switch (c.origin) {
      case "licence":
      case "licence-refunded":
        this.licence(personId, sources, "lifetime", c.firstAt, c.origin === "licence" ? "active" : "revoked", i);
        break;
      case "bundle-licence":
        this.licence(personId, sources, "suiteLifetime", c.firstAt, "active", i);
        break;
      case "subscription-active":
      case "subscription-past-due":
      case "subscription-canceled":
      case "bundle-subscription":
        this.subscription(personId, sources, c);
        break;
      case "trial-active":
        this.grant(personId, sources, "trial", c.firstAt, c.firstAt + 14 * DAY, null);
        break;
      case "trial-expired":
        this.grant(personId, sources, "trial", c.firstAt, c.firstAt + 14 * DAY, null);
        break;
      case "grant-open":
        this.grant(personId, sources, "grant", c.firstAt, null, null);
        break;
      case "grant-timed":
        this.grant(personId, sources, "grant", c.firstAt, this.now + (30 + (i % 300)) * DAY, null);
        break;
      case "grant-revoked":
        this.grant(personId, sources, "grant", c.firstAt, null, c.firstAt + 10 * DAY);
        break;
      case "account-only":
        break;
    }

    for (let d = 0; d < c.devices; d++) {
      const createdAt = c.signedInAt ?? c.firstAt;
      this.batch.devices.push({
        id: newId("dev"),
        workspace_id: workspaceId,
        env,
        tool_id: BENCH.tool,
        person_id: personId,
        licence_id: null,
        name: d === 0 ? "Chrome on Windows" : "Firefox on macOS",
        platform: d === 0 ? "windows" : "macos",
        created_at: createdAt,
        last_active_at: Math.max(createdAt, this.now - Math.floor(fraction(i, 20 + d) * 30 * DAY)),
        signed_out_at: null,
        // Signed in as verify leaves a device: its session token stored as SHA-256 (scenario 8 sends it).
        token_hash: createHash("sha256").update(deviceTokenOf(i, d)).digest("hex"),
      });
    }

    const starts = [c.firstAt, c.earlierTrial ? c.firstAt - 20 * DAY : c.firstAt, c.signedInAt ?? c.firstAt];
    this.batch.people.push({
      id: personId,
      workspace_id: workspaceId,
      env,
      email: c.email,
      email_norm: normaliseEmail(c.email),
      signed_in_at: c.signedInAt,
      created_at: Math.min(...starts),
    });
    this.customer(personId, BENCH.tool, sources.tool, c.signedInAt);
    if (sources.other.licences.length + sources.other.subscriptions.length > 0) this.customer(personId, BENCH.otherTool, sources.other, null);
  }

  /** The list-index row, derived as syncCustomer derives it on a first sync. */
  private customer(personId: string, toolId: string, sources: Sources, signedInAt: number | null): void {
    const entitlement = computeEntitlement(sources, this.now);
    const starts = [entitlement.firstHeldAt, signedInAt].filter((t): t is number => t !== null);
    if (starts.length === 0) return;
    const signedIn = signedInAt !== null;
    this.batch.customers.push({
      workspace_id: this.ws.workspaceId,
      env: this.ws.env,
      tool_id: toolId,
      person_id: personId,
      since: Math.min(...starts),
      signed_in: signedIn ? 1 : 0,
      kind: entitlement.entitled ? "holder" : signedIn ? "member" : "none",
      held_until: entitlement.entitled ? entitlement.heldUntil : null,
    });
  }

  private licence(personId: string, sources: ToolSources, plan: "lifetime" | "suiteLifetime", at: number, status: "active" | "revoked", i: number): void {
    const id = newId("lic");
    const bundle = plan === "suiteLifetime";
    const amountCents = BENCH.plans[plan].amountCents;
    this.batch.licences.push({
      id,
      workspace_id: this.ws.workspaceId,
      env: this.ws.env,
      person_id: personId,
      product_kind: bundle ? "bundle" : "tool",
      product_id: bundle ? BENCH.bundle : BENCH.tool,
      plan_id: BENCH.plans[plan].id,
      status,
      purchased_at: at,
      amount_cents: amountCents,
      currency: "eur",
      payment_intent: `pi_bench${i}`,
      checkout_session: null,
      seats: null,
      team_licence_id: null,
      team_subscription_id: null,
      created_at: at,
    });
    const source: LicenceSource = {
      id,
      status,
      purchasedAt: at,
      seats: null,
      teamLicenceStatus: null,
      teamSubscriptionRunning: null,
      plan: planInfo(plan),
      givesAccess: true,
      terms: NO_TERMS,
      createdAt: at,
    };
    sources.tool.licences.push(source);
    if (bundle) sources.other.licences.push(source);
  }

  private subscription(personId: string, sources: ToolSources, c: CustomerPlan): void {
    const bundle = c.origin === "bundle-subscription";
    const plan: PlanKey = bundle ? "suiteYearly" : "monthly";
    const period = bundle ? 365 * DAY : 30 * DAY;
    let status = "active";
    // The current period began after the subscription did.
    let periodStart = Math.max(c.firstAt, this.now - Math.floor(fraction(c.index, 30) * period));
    let endedAt: number | null = null;
    if (c.origin === "subscription-past-due") {
      status = "past_due";
      periodStart = Math.max(c.firstAt, this.now - period - 2 * DAY);
    } else if (c.origin === "subscription-canceled") {
      status = "canceled";
      endedAt = Math.min(this.now - DAY, c.firstAt + 3 * period);
      periodStart = endedAt - period;
    }
    const periodEnd = endedAt ?? periodStart + period;
    const id = newId("sub");
    this.batch.subscriptions.push({
      workspace_id: this.ws.workspaceId,
      env: this.ws.env,
      id,
      person_id: personId,
      product_kind: bundle ? "bundle" : "tool",
      product_id: bundle ? BENCH.bundle : BENCH.tool,
      plan_id: BENCH.plans[plan].id,
      status,
      current_period_start: periodStart,
      current_period_end: periodEnd,
      cancel_at_period_end: 0,
      cancel_at: null,
      ended_at: endedAt,
      seats: null,
      created_at: c.firstAt,
    });
    const source: SubscriptionSource = {
      id,
      status,
      periodStart,
      periodEnd,
      cancelAtPeriodEnd: false,
      cancelAt: null,
      endedAt,
      seats: null,
      plan: planInfo(plan),
      terms: NO_TERMS,
      createdAt: c.firstAt,
    };
    sources.tool.subscriptions.push(source);
    if (bundle) sources.other.subscriptions.push(source);
  }

  private grant(personId: string, sources: ToolSources, kind: "grant" | "trial", startsAt: number, endsAt: number | null, revokedAt: number | null): void {
    const id = newId("gr");
    this.batch.grants.push({
      id,
      workspace_id: this.ws.workspaceId,
      env: this.ws.env,
      tool_id: BENCH.tool,
      person_id: personId,
      kind,
      starts_at: startsAt,
      ends_at: endsAt,
      revoked_at: revokedAt,
      note: kind === "grant" ? "beta tester" : null,
      created_at: startsAt,
    });
    const source: GrantSource = { id, kind, startsAt, endsAt, revokedAt, planId: null, terms: null, createdAt: startsAt };
    sources.tool.grants.push(source);
  }
}

// Bound parameters per statement: SQLite allows 32,766, PostgreSQL 65,535.
const MAX_PARAMETERS = 30_000;
const CUSTOMERS_PER_TRANSACTION = 10_000;

async function insertRows<T extends keyof Database>(trx: Trx, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(first).length));
  for (let i = 0; i < rows.length; i += perStatement) {
    // Kysely's insert types do not follow a table name held in a type parameter.
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + perStatement) as never)
      .execute();
  }
}

/**
 * Adds customers [from, to) to the workspace: one transaction per 10,000, people first
 * so that the sources' foreign keys hold. Answers the rows written per table.
 */
export async function seedCustomers(
  storage: Storage,
  ws: BenchWorkspace,
  range: { from: number; to: number; now: number },
  onProgress?: (done: number) => void,
): Promise<Record<keyof Batch, number>> {
  const totals: Record<keyof Batch, number> = { people: 0, licences: 0, subscriptions: 0, grants: 0, devices: 0, customers: 0 };
  for (let start = range.from; start < range.to; start += CUSTOMERS_PER_TRANSACTION) {
    const end = Math.min(range.to, start + CUSTOMERS_PER_TRANSACTION);
    const batch = emptyBatch();
    const writer = new CustomerWriter(ws, range.now, batch);
    for (let i = start; i < end; i++) writer.add(planCustomer(i, range.now));
    await storage.db.transaction().execute(async (trx) => {
      await insertRows(trx, "people", batch.people);
      await insertRows(trx, "licences", batch.licences);
      await insertRows(trx, "subscriptions", batch.subscriptions);
      await insertRows(trx, "grants", batch.grants);
      await insertRows(trx, "devices", batch.devices);
      await insertRows(trx, "customers", batch.customers);
      // The later transactions planned for tables this size: a trigger planned on an empty
      // `customers` read the whole table for each new row (src/db/statistics.store.ts).
      if (start === range.from) await refreshPlannerStatistics(trx, ["people", "licences", "subscriptions", "grants", "devices", "customers"]);
    });
    for (const table of Object.keys(totals) as (keyof Batch)[]) totals[table] += batch[table].length;
    onProgress?.(end);
  }
  return totals;
}

class Rollback extends Error {}

/**
 * Re-derives the customers rows of `sample` customers with the service's own
 * syncCustomer, in a transaction that is rolled back, and fails on any difference:
 * the seeded list index must be the one Warden would have written.
 */
export async function verifySeed(storage: Storage, ws: BenchWorkspace, indexes: readonly number[]): Promise<void> {
  const { db } = storage;
  const scope = toolScope(ws.workspaceId, ws.env, BENCH.tool);
  const problems: string[] = [];
  for (const i of indexes) {
    const email = emailOf(i);
    const person = await findPersonByEmail(db, ws.workspaceId, ws.env, email);
    if (!person) {
      problems.push(`customer ${i} (${email}) was not seeded`);
      continue;
    }
    try {
      await db.transaction().execute(async (trx) => {
        const seeded = await findCustomerRow(trx, scope, person.id);
        const synced = await syncCustomer(trx, scope, person.id, Date.now());
        const same =
          seeded !== null &&
          synced !== null &&
          seeded.since === synced.since &&
          seeded.kind === synced.kind &&
          seeded.signedIn === synced.signedIn &&
          seeded.heldUntil === synced.heldUntil;
        if (!same) problems.push(`customer ${i}: seeded ${JSON.stringify(seeded)}, syncCustomer says ${JSON.stringify(synced)}`);
        throw new Rollback();
      });
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
    }
  }
  if (problems.length > 0) throw new Error(`seeded customers disagree with syncCustomer:\n${problems.slice(0, 10).join("\n")}`);
}

/** Grants the load wrote (by their note) and the counters they were charged to. */
export async function countLoadGrants(storage: Storage, ws: BenchWorkspace, note: string): Promise<{ grants: number; counters: Record<string, number> }> {
  const { db } = storage;
  const row = await db
    .selectFrom("grants")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", ws.workspaceId)
    .where("note", "=", note)
    .executeTakeFirstOrThrow();
  const counters = await db.selectFrom("counters").select(["scope", "count"]).where("scope", "like", "%additions%").execute();
  const grantCounters = await db
    .selectFrom("counters")
    .select(["scope", "count"])
    .where("scope", "=", `grants:${ws.workspaceId}:${ws.env}:${BENCH.tool}`)
    .execute();
  return {
    grants: Number(row.n),
    counters: Object.fromEntries([...counters, ...grantCounters].map((c) => [c.scope.split(":")[0] ?? c.scope, Number(c.count)])),
  };
}
