import { type RawBuilder, sql } from "kysely";
import { jsonArrayFrom as pgJsonArrayFrom } from "kysely/helpers/postgres";
import { jsonArrayFrom as sqliteJsonArrayFrom } from "kysely/helpers/sqlite";
import { batchedRead } from "../db/batched-read.js";
import { type Dialect, dialectOf, type Executor } from "../db/database.js";
import { type Placeholder, prepared, preparedRaw } from "../db/prepared.js";
import type { CustomerKind, Env, PlansTable, ProductKind } from "../db/schema.js";
import { normaliseEmail } from "./email.js";
import type { GrantSource, LicenceSource, PlanInfo, Sources, SubscriptionSource } from "./entitlement.js";
import type { Person } from "./person.store.js";

export interface ToolScope {
  workspaceId: string;
  env: Env;
  toolId: string;
}

type PlanColumns = Pick<PlansTable, "name" | "billing" | "amount_cents" | "currency" | "interval"> & { plan_id: string | null };

function toPlan(row: { plan_id: string | null; p_name: string | null } & Partial<Record<string, unknown>>): PlanInfo | null {
  if (row.plan_id === null || row.p_name === null) return null;
  const r = row as unknown as PlanColumns & { p_name: string };
  return {
    id: r.plan_id as string,
    name: r.p_name,
    billing: r.billing,
    amountCents: r.amount_cents === null ? null : Number(r.amount_cents),
    currency: r.currency,
    interval: r.interval,
  };
}

/** Licences and subscriptions for the tool itself or for a bundle that names it. */
function coversTool(alias: "l" | "s", scope: SourceScope) {
  const kind = sql.ref(`${alias}.product_kind`);
  const id = sql.ref(`${alias}.product_id`);
  return sql<boolean>`((${kind} = 'tool' and ${id} = ${scope.toolId}) or (${kind} = 'bundle' and ${id} in (select bundle_id from bundle_tools where workspace_id = ${scope.workspaceId} and tool_id = ${scope.toolId})))`;
}

/** The workspace and tool of a source query: values, or columns of an enclosing query. */
export interface SourceScope {
  workspaceId: string | RawBuilder<string>;
  toolId: string | RawBuilder<string>;
}

/** Whose sources: these people's ids, or the `person` row of an enclosing query. */
type PersonFilter = readonly string[] | "enclosing";

function ofPerson(column: string, persons: PersonFilter) {
  return persons === "enclosing" ? sql<boolean>`${sql.ref(column)} = ${sql.ref("person.id")}` : sql<boolean>`${sql.ref(column)} in (${sql.join(persons)})`;
}

function licencesQuery(ex: Executor, scope: SourceScope, persons: PersonFilter) {
  return ex
    .selectFrom("licences as l")
    .leftJoin("plans as p", (join) =>
      join
        .onRef("p.workspace_id", "=", "l.workspace_id")
        .onRef("p.product_kind", "=", "l.product_kind")
        .onRef("p.product_id", "=", "l.product_id")
        .onRef("p.id", "=", "l.plan_id"),
    )
    .leftJoin("licences as team", "team.id", "l.team_licence_id")
    .leftJoin("subscriptions as ts", (join) =>
      join.onRef("ts.workspace_id", "=", "l.workspace_id").onRef("ts.env", "=", "l.env").onRef("ts.id", "=", "l.team_subscription_id"),
    )
    .select([
      "l.id",
      "l.person_id",
      "l.status",
      "l.purchased_at",
      "l.seats",
      "l.created_at",
      "l.plan_id",
      "l.team_subscription_id",
      "team.status as team_status",
      "ts.status as ts_status",
      "ts.ended_at as ts_ended_at",
      "p.name as p_name",
      "p.billing",
      "p.amount_cents",
      "p.currency",
      "p.interval",
    ])
    .where(ofPerson("l.person_id", persons))
    .where(coversTool("l", scope));
}

function subscriptionsQuery(ex: Executor, scope: SourceScope, persons: PersonFilter) {
  return ex
    .selectFrom("subscriptions as s")
    .leftJoin("plans as p", (join) =>
      join
        .onRef("p.workspace_id", "=", "s.workspace_id")
        .onRef("p.product_kind", "=", "s.product_kind")
        .onRef("p.product_id", "=", "s.product_id")
        .onRef("p.id", "=", "s.plan_id"),
    )
    .select([
      "s.id",
      "s.person_id",
      "s.status",
      "s.current_period_start",
      "s.current_period_end",
      "s.cancel_at_period_end",
      "s.cancel_at",
      "s.ended_at",
      "s.seats",
      "s.created_at",
      "s.plan_id",
      "p.name as p_name",
      "p.billing",
      "p.amount_cents",
      "p.currency",
      "p.interval",
    ])
    .where(ofPerson("s.person_id", persons))
    .where(coversTool("s", scope));
}

function grantsQuery(ex: Executor, scope: SourceScope, persons: PersonFilter) {
  return ex
    .selectFrom("grants as g")
    .select(["g.id", "g.person_id", "g.kind", "g.starts_at", "g.ends_at", "g.revoked_at", "g.created_at"])
    .where(ofPerson("g.person_id", persons))
    .where("g.tool_id", "=", scope.toolId);
}

type LicenceRow = Awaited<ReturnType<ReturnType<typeof licencesQuery>["execute"]>>[number];
type SubscriptionRow = Awaited<ReturnType<ReturnType<typeof subscriptionsQuery>["execute"]>>[number];
type GrantRow = Awaited<ReturnType<ReturnType<typeof grantsQuery>["execute"]>>[number];

function toLicenceSource(r: LicenceRow): LicenceSource {
  return {
    id: r.id,
    status: r.status,
    purchasedAt: Number(r.purchased_at),
    seats: r.seats,
    teamLicenceStatus: r.team_status,
    teamSubscriptionRunning:
      r.team_subscription_id === null ? null : r.ts_status !== null && r.ts_ended_at === null && ["trialing", "active", "past_due"].includes(r.ts_status),
    plan: toPlan(r),
    createdAt: Number(r.created_at),
  };
}

function toSubscriptionSource(r: SubscriptionRow): SubscriptionSource {
  return {
    id: r.id,
    status: r.status,
    periodStart: Number(r.current_period_start),
    periodEnd: Number(r.current_period_end),
    cancelAtPeriodEnd: r.cancel_at_period_end === 1,
    cancelAt: r.cancel_at === null ? null : Number(r.cancel_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    seats: r.seats,
    plan: toPlan(r),
    createdAt: Number(r.created_at),
  };
}

function toGrantSource(r: GrantRow): GrantSource {
  return {
    id: r.id,
    kind: r.kind,
    startsAt: Number(r.starts_at),
    endsAt: r.ends_at === null ? null : Number(r.ends_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    createdAt: Number(r.created_at),
  };
}

/** The bit of each kind of source in `people.source_kinds` (set by migration 011's triggers). */
const SOURCE_KIND_BITS = { licences: 1, subscriptions: 2, grants: 4 } as const;

/**
 * A person's sources of one kind as a JSON array, looked for only when the person has
 * ever had one: with a million customers each index looked into is a page that is rarely
 * cached, and most people have one kind of source or none (in the benchmark's mix a
 * retrieve looked into three source indexes, now 0.76 on average). At 1M customers,
 * bench/ab.ts: SQLite b/a 1.055, PostgreSQL 1.24.
 */
function ifHeld<T>(kind: keyof typeof SOURCE_KIND_BITS, array: RawBuilder<T[]>, dialect: Dialect): RawBuilder<T[]> {
  const none = dialect === "postgres" ? sql`cast('[]' as json)` : sql`'[]'`;
  return sql<T[]>`case when ${sql.ref("person.source_kinds")} & ${sql.lit(SOURCE_KIND_BITS[kind])} <> 0 then ${array} else ${none} end`;
}

// One person's sources, prepared once (syncCustomer and the client's access check ask for one).
const oneScope = (p: Placeholder): SourceScope => ({ workspaceId: p<string>(0), toolId: p<string>(1) });
const licencesOfOne = prepared((ex, p) => licencesQuery(ex, oneScope(p), [p<string>(2)]));
const subscriptionsOfOne = prepared((ex, p) => subscriptionsQuery(ex, oneScope(p), [p<string>(2)]));
const grantsOfOne = prepared((ex, p) => grantsQuery(ex, oneScope(p), [p<string>(2)]));

/** Every source of access for these people and this tool, in a few indexed queries. */
export async function loadSources(ex: Executor, scope: ToolScope, personIds: readonly string[]): Promise<Map<string, Sources>> {
  const result = new Map<string, Sources>(personIds.map((id) => [id, { licences: [], subscriptions: [], grants: [] }]));
  if (personIds.length === 0) return result;

  const [first] = personIds;
  const one = personIds.length === 1 && first !== undefined;
  // The three queries do not depend on each other: on PostgreSQL they overlap on the
  // pool's connections (one round trip of waiting instead of three).
  const [licences, subscriptions, grants] = await Promise.all([
    one ? licencesOfOne(ex, [scope.workspaceId, scope.toolId, first]) : licencesQuery(ex, scope, personIds).execute(),
    one ? subscriptionsOfOne(ex, [scope.workspaceId, scope.toolId, first]) : subscriptionsQuery(ex, scope, personIds).execute(),
    one ? grantsOfOne(ex, [scope.workspaceId, scope.toolId, first]) : grantsQuery(ex, scope, personIds).execute(),
  ]);
  for (const r of licences) result.get(r.person_id)?.licences.push(toLicenceSource(r));
  for (const r of subscriptions) result.get(r.person_id)?.subscriptions.push(toSubscriptionSource(r));
  for (const r of grants) result.get(r.person_id)?.grants.push(toGrantSource(r));
  return result;
}

/**
 * The person with an address (normalised) and every source of their access to the tool,
 * in one statement: the sources come as JSON arrays of the same rows loadSources reads.
 * Retrieve-a-customer runs this on every call; as four statements it was four round
 * trips on PostgreSQL (each 0.2 to 0.6 ms in the driver, with a pool checkout each).
 * Arguments: workspace, tool, environment, normalised address.
 */
const personWithSources = prepared((ex, p) => {
  const dialect = dialectOf(ex);
  const jsonArrayFrom = dialect === "postgres" ? pgJsonArrayFrom : sqliteJsonArrayFrom;
  const scope = oneScope(p);
  return ex
    .selectFrom("people as person")
    .select([
      "person.id",
      "person.email",
      "person.signed_in_at",
      ifHeld("licences", jsonArrayFrom(licencesQuery(ex, scope, "enclosing")), dialect).as("licences"),
      ifHeld("subscriptions", jsonArrayFrom(subscriptionsQuery(ex, scope, "enclosing")), dialect).as("subscriptions"),
      ifHeld("grants", jsonArrayFrom(grantsQuery(ex, scope, "enclosing")), dialect).as("grants"),
    ])
    .where("person.workspace_id", "=", p<string>(0))
    .where("person.env", "=", p<Env>(2))
    .where("person.email_norm", "=", p<string>(3));
});

/**
 * The same for several addresses at once (PostgreSQL, where concurrent retrieves share it):
 * arrays of workspaces, tools, environments and normalised addresses; `i` is the position
 * asked (from 1), and an address with no person has no row.
 */
const manyPersonsWithSources = preparedRaw<PersonWithSourcesRow & { i: number }>((p, ex) => {
  const scope: SourceScope = { workspaceId: sql.ref<string>("q.ws"), toolId: sql.ref<string>("q.tool") };
  return sql`select q.i, person.id, person.email, person.signed_in_at,
  ${ifHeld("licences", pgJsonArrayFrom(licencesQuery(ex, scope, "enclosing")), "postgres")} as licences,
  ${ifHeld("subscriptions", pgJsonArrayFrom(subscriptionsQuery(ex, scope, "enclosing")), "postgres")} as subscriptions,
  ${ifHeld("grants", pgJsonArrayFrom(grantsQuery(ex, scope, "enclosing")), "postgres")} as grants
from unnest(cast(${p<string[]>(0)} as text[]), cast(${p<string[]>(1)} as text[]), cast(${p<string[]>(2)} as text[]), cast(${p<string[]>(3)} as text[]))
  with ordinality as q(ws, tool, env, email_norm, i)
join people as person on person.workspace_id = q.ws and person.env = q.env and person.email_norm = q.email_norm`;
});

type PersonWithSourcesRow = Awaited<ReturnType<typeof personWithSources>>[number];

// PostgreSQL's driver parses json columns; SQLite answers them as text.
const fromJson = <T>(value: T[] | string): T[] => (typeof value === "string" ? (JSON.parse(value) as T[]) : value);

function toPersonWithSources(row: PersonWithSourcesRow | undefined): PersonWithSources | null {
  if (!row) return null;
  return {
    person: { id: row.id, email: row.email, signedInAt: row.signed_in_at === null ? null : Number(row.signed_in_at) },
    sources: toSources(row),
  };
}

/**
 * The sources of the `person` of an enclosing statement, as its columns `licences`,
 * `subscriptions` and `grants` (JSON arrays), for a tool that may be a column of that
 * statement too: the client's access check reads them with the device in one statement.
 */
export function sourceColumns(ex: Executor, scope: SourceScope): RawBuilder<unknown> {
  const dialect = dialectOf(ex);
  const jsonArrayFrom = dialect === "postgres" ? pgJsonArrayFrom : sqliteJsonArrayFrom;
  return sql`${ifHeld("licences", jsonArrayFrom(licencesQuery(ex, scope, "enclosing")), dialect)} as licences,
  ${ifHeld("subscriptions", jsonArrayFrom(subscriptionsQuery(ex, scope, "enclosing")), dialect)} as subscriptions,
  ${ifHeld("grants", jsonArrayFrom(grantsQuery(ex, scope, "enclosing")), dialect)} as grants`;
}

/** The columns `sourceColumns` adds to a row. */
export interface SourceColumns {
  licences: LicenceRow[] | string;
  subscriptions: SubscriptionRow[] | string;
  grants: GrantRow[] | string;
}

export function toSources(row: SourceColumns): Sources {
  return {
    licences: fromJson(row.licences).map(toLicenceSource),
    subscriptions: fromJson(row.subscriptions).map(toSubscriptionSource),
    grants: fromJson(row.grants).map(toGrantSource),
  };
}

export interface PersonWithSources {
  person: Person;
  sources: Sources;
}

const argsOf = (scope: ToolScope, email: string) => [scope.workspaceId, scope.toolId, scope.env, normaliseEmail(email)] as const;

/** The person with an address and every source of their access to the tool, or null when no person has the address. */
export const findPersonWithSources = batchedRead<{ scope: ToolScope; email: string }, PersonWithSources | null>(
  async (ex, { scope, email }) => toPersonWithSources((await personWithSources(ex, argsOf(scope, email)))[0]),
  async (ex, asked) => {
    const columns = [0, 1, 2, 3].map((c) => asked.map(({ scope, email }) => argsOf(scope, email)[c]));
    const rows = await manyPersonsWithSources(ex, columns);
    const byPosition = new Map(rows.map((row) => [Number(row.i), row]));
    return asked.map((_, i) => toPersonWithSources(byPosition.get(i + 1)));
  },
);

export interface CustomerRow {
  personId: string;
  since: number;
  signedIn: boolean;
  kind: CustomerKind;
  heldUntil: number | null;
}

export async function findCustomerRow(ex: Executor, scope: ToolScope, personId: string): Promise<CustomerRow | null> {
  const row = await ex
    .selectFrom("customers")
    .select(["person_id", "since", "signed_in", "kind", "held_until"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("tool_id", "=", scope.toolId)
    .where("person_id", "=", personId)
    .executeTakeFirst();
  return row
    ? {
        personId: row.person_id,
        since: Number(row.since),
        signedIn: row.signed_in === 1,
        kind: row.kind,
        heldUntil: row.held_until === null ? null : Number(row.held_until),
      }
    : null;
}

/** The customer rows of these people for one tool (those that exist). */
export async function findCustomerRows(ex: Executor, scope: ToolScope, personIds: readonly string[]): Promise<Map<string, CustomerRow>> {
  if (personIds.length === 0) return new Map();
  const rows = await ex
    .selectFrom("customers")
    .select(["person_id", "since", "signed_in", "kind", "held_until"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("tool_id", "=", scope.toolId)
    .where("person_id", "in", personIds)
    .execute();
  return new Map(
    rows.map((row) => [
      row.person_id,
      {
        personId: row.person_id,
        since: Number(row.since),
        signedIn: row.signed_in === 1,
        kind: row.kind,
        heldUntil: row.held_until === null ? null : Number(row.held_until),
      },
    ]),
  );
}

/** For each of these people, the tools whose list has them as signed in, with their `since`. */
export async function findSignedInTools(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  personIds: readonly string[],
): Promise<Map<string, Map<string, number>>> {
  const result = new Map<string, Map<string, number>>();
  if (personIds.length === 0) return result;
  const rows = await ex
    .selectFrom("customers")
    .select(["person_id", "tool_id", "since"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("person_id", "in", personIds)
    .where("signed_in", "=", 1)
    .execute();
  for (const r of rows) {
    const tools = result.get(r.person_id) ?? new Map<string, number>();
    tools.set(r.tool_id, Number(r.since));
    result.set(r.person_id, tools);
  }
  return result;
}

/**
 * The people who bought a product (a licence or a subscription of it, in any state,
 * seats of a team purchase included), by person id, `limit` after `afterPersonId`.
 * Walks the environment's licences and subscriptions: only a bundle's change of tools
 * asks, and no index on the product is worth its cost on every purchase for that.
 */
export async function listProductBuyers(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  product: { kind: ProductKind; id: string },
  page: { limit: number; afterPersonId: string | null },
): Promise<string[]> {
  const licences = ex
    .selectFrom("licences")
    .select("person_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("product_kind", "=", product.kind)
    .where("product_id", "=", product.id);
  const subscriptions = ex
    .selectFrom("subscriptions")
    .select("person_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("product_kind", "=", product.kind)
    .where("product_id", "=", product.id);
  let query = ex.selectFrom(licences.union(subscriptions).as("buyers")).select("person_id");
  if (page.afterPersonId !== null) query = query.where("person_id", ">", page.afterPersonId);
  const rows = await query.orderBy("person_id").limit(page.limit).execute();
  return rows.map((r) => r.person_id);
}

export async function upsertCustomerRow(ex: Executor, scope: ToolScope, row: CustomerRow): Promise<void> {
  const values = { since: row.since, signed_in: row.signedIn ? 1 : 0, kind: row.kind, held_until: row.heldUntil };
  await ex
    .insertInto("customers")
    .values({ workspace_id: scope.workspaceId, env: scope.env, tool_id: scope.toolId, person_id: row.personId, ...values })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "tool_id", "person_id"]).doUpdateSet(values))
    .execute();
}

/** upsertCustomerRow for several people in one statement. */
export async function upsertCustomerRows(ex: Executor, scope: ToolScope, rows: readonly CustomerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await ex
    .insertInto("customers")
    .values(
      rows.map((row) => ({
        workspace_id: scope.workspaceId,
        env: scope.env,
        tool_id: scope.toolId,
        person_id: row.personId,
        since: row.since,
        signed_in: row.signedIn ? 1 : 0,
        kind: row.kind,
        held_until: row.heldUntil,
      })),
    )
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "tool_id", "person_id"]).doUpdateSet((eb) => ({
        since: eb.ref("excluded.since"),
        signed_in: eb.ref("excluded.signed_in"),
        kind: eb.ref("excluded.kind"),
        held_until: eb.ref("excluded.held_until"),
      })),
    )
    .execute();
}

/** Holders whose timed access has run out become members (signed in) or drop out of the list. */
export async function demoteExpiredHolders(ex: Executor, scope: ToolScope, now: number): Promise<void> {
  await ex
    .updateTable("customers")
    .set({ kind: sql<CustomerKind>`case when signed_in = 1 then 'member' else 'none' end` })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("tool_id", "=", scope.toolId)
    .where("kind", "=", "holder")
    .where("held_until", "is not", null)
    .where("held_until", "<=", now)
    .execute();
}

export interface ListPosition {
  since: number;
  personId: string;
}

/** The oldest row still among the newest `cap` of a kind, or null when the kind has fewer. */
export async function findKindBoundary(ex: Executor, scope: ToolScope, kind: CustomerKind, cap: number): Promise<ListPosition | null> {
  const row = await ex
    .selectFrom("customers")
    .select(["since", "person_id"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("tool_id", "=", scope.toolId)
    .where("kind", "=", kind)
    .orderBy("since", "desc")
    .orderBy("person_id", "desc")
    .limit(1)
    .offset(cap - 1)
    .executeTakeFirst();
  return row ? { since: Number(row.since), personId: row.person_id } : null;
}

export interface KindWindow {
  kind: CustomerKind;
  /** The oldest position of the kind that is still listed; null when all of it is. */
  boundary: ListPosition | null;
}

/**
 * One page across the given kinds, each kind cut at its boundary: newest first after
 * `after`, or, towards the newest, oldest first after `before` (the caller turns that
 * page round). Each kind is its own keyset walk of the list index (a query over both
 * kinds at once would read the tool's whole index range); with several kinds, the walks
 * of at most `limit` rows are merged by the database, so its own ordering decides ties.
 */
export async function listCustomerPage(
  ex: Executor,
  scope: ToolScope,
  options: { windows: KindWindow[]; after: ListPosition | null; before?: ListPosition | null; limit: number },
): Promise<(ListPosition & { kind: CustomerKind })[]> {
  const { after, limit } = options;
  const before = options.before ?? null;
  const order = before === null ? "desc" : "asc";
  const walks = options.windows.map(({ kind, boundary }) => {
    let query = ex
      .selectFrom("customers")
      .select(["since", "person_id", "kind"])
      .where("workspace_id", "=", scope.workspaceId)
      .where("env", "=", scope.env)
      .where("tool_id", "=", scope.toolId)
      .where("kind", "=", kind);
    if (after) query = query.where(sql<boolean>`(since, person_id) < (${after.since}, ${after.personId})`);
    if (before) query = query.where(sql<boolean>`(since, person_id) > (${before.since}, ${before.personId})`);
    if (boundary) query = query.where(sql<boolean>`(since, person_id) >= (${boundary.since}, ${boundary.personId})`);
    return query.orderBy("since", order).orderBy("person_id", order).limit(limit);
  });
  const [first, ...others] = walks;
  if (!first) return [];
  let rows: { since: number; person_id: string; kind: CustomerKind }[];
  if (others.length === 0) {
    rows = await first.execute();
  } else {
    let merged = ex.selectFrom(first.as("w0")).selectAll();
    others.forEach((walk, i) => {
      merged = merged.unionAll(ex.selectFrom(walk.as(`w${i + 1}`)).selectAll());
    });
    rows = await ex.selectFrom(merged.as("m")).selectAll().orderBy("since", order).orderBy("person_id", order).limit(limit).execute();
  }
  return rows.map((r) => ({ since: Number(r.since), personId: r.person_id, kind: r.kind }));
}

/**
 * How many rows a kind has, counting no further than `upTo` when given (a page's count
 * stops, so that its cost does not grow with the tool; an export's counts them all).
 */
export async function countCustomerKind(ex: Executor, scope: ToolScope, kind: CustomerKind, upTo?: number): Promise<number> {
  let inRange = ex
    .selectFrom("customers")
    .select("person_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("tool_id", "=", scope.toolId)
    .where("kind", "=", kind);
  if (upTo !== undefined) inRange = inRange.limit(upTo);
  const row = await ex
    .selectFrom(inRange.as("k"))
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A search's text, for `searchCustomerRows`: 1 to 2 characters match the start of an address, 3 or more any part of it. */
export const SEARCH_ANYWHERE_FROM = 3;

/**
 * The customers of these kinds whose address contains `text` (or, shorter than
 * SEARCH_ANYWHERE_FROM, starts with it), in case-insensitive comparison, at most
 * `limit` of them, in no particular order (on SQLite the newest people first: the index
 * walks its rows backwards at no cost). Found by the address's trigram index
 * (migration 027): SQLite's FTS5 table, PostgreSQL's pg_trgm index; each candidate is
 * checked against the address itself, so the index only narrows.
 */
export async function searchCustomerRows(
  ex: Executor,
  scope: ToolScope,
  options: { kinds: readonly CustomerKind[]; text: string; limit: number },
): Promise<(ListPosition & { kind: CustomerKind })[]> {
  const { text, limit } = options;
  const anywhere = text.length >= SEARCH_ANYWHERE_FROM;
  const kinds = sql.join(options.kinds.map((k) => sql.lit(k)));
  const like = (part: string) => (anywhere ? `%${escapeLike(part)}%` : `${escapeLike(part)}%`);
  // Both indexes read the whole list of rows of every trigram asked for: a whole address
  // asks for its domain's ("exa", "com"…, in most addresses), on PostgreSQL 103 ms at 1M
  // against 14.6 ms for the part before the @. So the index is asked for that part (3
  // characters or more) and the whole text checked on what it finds (on PostgreSQL,
  // `|| ''` is not the indexed expression, so the planner cannot take it to the index).
  const at = text.indexOf("@");
  const narrowed = anywhere && at >= SEARCH_ANYWHERE_FROM && at < text.length - 1 ? text.slice(0, at + 1) : null;
  const rows =
    dialectOf(ex) === "postgres"
      ? await sql<{ since: number; person_id: string; kind: CustomerKind }>`select c.since, c.person_id, c.kind
from people p
join customers c on c.workspace_id = p.workspace_id and c.env = p.env and c.tool_id = ${scope.toolId} and c.person_id = p.id
where p.workspace_id = ${scope.workspaceId} and p.env = ${scope.env}
  and ${
    narrowed === null
      ? sql`lower(p.email) like lower(${like(text)}) escape '\\'`
      : sql`lower(p.email) like lower(${like(narrowed)}) escape '\\' and lower(p.email) || '' like lower(${like(text)}) escape '\\'`
  }
  and c.kind in (${kinds})
limit ${limit}`.execute(ex)
      : await sql<{ since: number; person_id: string; kind: CustomerKind }>`select c.since, c.person_id, c.kind
from people_search s
join people p on p.rowid = s.rowid
join customers c on c.workspace_id = p.workspace_id and c.env = p.env and c.tool_id = ${scope.toolId} and c.person_id = p.id
where people_search match ${ftsPhrase(anywhere ? (narrowed ?? text) : `^^${text}`.slice(-SEARCH_ANYWHERE_FROM))}
  and p.workspace_id = ${scope.workspaceId} and p.env = ${scope.env}
  and ${anywhere ? sql`instr(lower(p.email), lower(${text})) > 0` : sql`substr(lower(p.email), 1, ${text.length}) = lower(${text})`}
  and c.kind in (${kinds})
order by s.rowid desc
limit ${limit}`.execute(ex);
  return rows.rows.map((r) => ({ since: Number(r.since), personId: r.person_id, kind: r.kind }));
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** An FTS5 phrase: with the trigram tokenizer, rows that contain the text (the index's "^^" marks an address's start). */
const ftsPhrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

export interface DeviceActivity {
  devices: number;
  lastActiveAt: number | null;
}

/** Devices signed in or activated, and the last check-in of any of them, per person. */
export async function loadDeviceActivity(ex: Executor, scope: ToolScope, personIds: readonly string[]): Promise<Map<string, DeviceActivity>> {
  const result = new Map<string, DeviceActivity>();
  if (personIds.length === 0) return result;
  const rows = await ex
    .selectFrom("devices")
    .select((eb) => [
      "person_id",
      eb.fn.count<number>("id").filterWhere("signed_out_at", "is", null).as("devices"),
      eb.fn.max("last_active_at").as("last_active_at"),
    ])
    .where("person_id", "in", personIds)
    .where("tool_id", "=", scope.toolId)
    .groupBy("person_id")
    .execute();
  for (const r of rows) {
    result.set(r.person_id, { devices: Number(r.devices), lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at) });
  }
  return result;
}

/** A licence as a customer's page lists it. */
export interface HeldLicence {
  id: string;
  status: "active" | "suspended" | "revoked";
  planName: string | null;
  purchasedAt: number;
  amountCents: number | null;
  currency: string | null;
  /** Above 0: a team purchase; its seats are licences of their own. */
  seats: number | null;
  /** A seat handed out from a team licence or team subscription. */
  seat: boolean;
  /** Whether a payment is recorded for it (a refund needs one). */
  paid: boolean;
  refundedAt: number | null;
}

/** A subscription as a customer's page lists it. */
export interface HeldSubscription {
  id: string;
  status: string;
  planName: string | null;
  currentPeriodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  endedAt: number | null;
  seats: number | null;
}

export interface HeldDevice {
  id: string;
  name: string;
  platform: string | null;
  createdAt: number;
  lastActiveAt: number | null;
  signedOutAt: number | null;
}

export interface Holdings {
  licences: HeldLicence[];
  subscriptions: HeldSubscription[];
  devices: HeldDevice[];
}

/** What a customer's page shows of one person for one tool at most: their newest devices. */
const HELD_DEVICES = 100;

/**
 * A person's licences and subscriptions that cover the tool (itself or a bundle naming
 * it), newest first, and their devices of the tool, the most recently active first.
 * A person belongs to one workspace environment, so the person's id is the whole filter
 * (and the index the planner takes: `…_person`).
 */
export async function loadHoldings(ex: Executor, scope: ToolScope, personId: string): Promise<Holdings> {
  const planName = (alias: "l" | "s") =>
    sql<
      string | null
    >`(select p.name from plans p where p.workspace_id = ${sql.ref(`${alias}.workspace_id`)} and p.product_kind = ${sql.ref(`${alias}.product_kind`)} and p.product_id = ${sql.ref(`${alias}.product_id`)} and p.id = ${sql.ref(`${alias}.plan_id`)})`;
  const licences = await ex
    .selectFrom("licences as l")
    .select([
      "l.id",
      "l.status",
      "l.purchased_at",
      "l.amount_cents",
      "l.currency",
      "l.payment_intent",
      "l.seats",
      "l.team_licence_id",
      "l.team_subscription_id",
      "l.refunded_at",
      planName("l").as("plan_name"),
    ])
    .where("l.person_id", "=", personId)
    .where(coversTool("l", scope))
    .orderBy("l.purchased_at", "desc")
    .orderBy("l.id")
    .execute();
  const subscriptions = await ex
    .selectFrom("subscriptions as s")
    .select(["s.id", "s.status", "s.current_period_end", "s.cancel_at_period_end", "s.cancel_at", "s.ended_at", "s.seats", planName("s").as("plan_name")])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .orderBy("s.created_at", "desc")
    .orderBy("s.id")
    .execute();
  const devices = await ex
    .selectFrom("devices")
    .select(["id", "name", "platform", "created_at", "last_active_at", "signed_out_at"])
    .where("person_id", "=", personId)
    .where("tool_id", "=", scope.toolId)
    .orderBy(sql`coalesce(last_active_at, created_at)`, "desc")
    .orderBy("id")
    .limit(HELD_DEVICES)
    .execute();
  const ms = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    licences: licences.map((r) => ({
      id: r.id,
      status: r.status,
      planName: r.plan_name,
      purchasedAt: Number(r.purchased_at),
      amountCents: ms(r.amount_cents),
      currency: r.currency,
      seats: ms(r.seats),
      seat: r.team_licence_id !== null || r.team_subscription_id !== null,
      paid: r.payment_intent !== null && r.amount_cents !== null && r.currency !== null,
      refundedAt: ms(r.refunded_at),
    })),
    subscriptions: subscriptions.map((r) => ({
      id: r.id,
      status: r.status,
      planName: r.plan_name,
      currentPeriodEnd: Number(r.current_period_end),
      cancelAtPeriodEnd: Number(r.cancel_at_period_end) === 1,
      cancelAt: ms(r.cancel_at),
      endedAt: ms(r.ended_at),
      seats: ms(r.seats),
    })),
    devices: devices.map((r) => ({
      id: r.id,
      name: r.name,
      platform: r.platform,
      createdAt: Number(r.created_at),
      lastActiveAt: ms(r.last_active_at),
      signedOutAt: ms(r.signed_out_at),
    })),
  };
}
