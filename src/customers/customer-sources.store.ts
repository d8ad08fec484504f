// Every source of a person's access to a tool (licences and subscriptions of the tool or
// of a bundle that names it, grants and trials), loaded in a few indexed queries for
// entitlement.ts to judge: for one person, for many, or as columns of a list's query.
import { type RawBuilder, sql } from "kysely";
import { jsonArrayFrom as pgJsonArrayFrom } from "kysely/helpers/postgres";
import { jsonArrayFrom as sqliteJsonArrayFrom } from "kysely/helpers/sqlite";
import { batchedRead } from "../db/batched-read.js";
import { type Dialect, dialectOf, type Executor } from "../db/database.js";
import { type Placeholder, prepared, preparedRaw } from "../db/prepared.js";
import type { Env, PlansTable } from "../db/schema.js";
import { type HeldPlanTerms, NO_TERMS } from "../usage/usage.types.js";
import type { ToolScope } from "./customer.store.js";
import { normaliseEmail } from "./email.js";
import type { GrantSource, LicenceSource, PlanInfo, Sources, SubscriptionSource } from "./entitlement.js";
import type { Person } from "./person.store.js";

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

/**
 * A source's terms for the tool: null when it names no plan (the tool's top terms apply),
 * none when its plan has no terms for the tool.
 */
function toTerms(planId: string | null, r: { t_features: string | null; t_allowances: string | null }): HeldPlanTerms | null {
  if (planId === null) return null;
  if (r.t_features === null || r.t_allowances === null) return NO_TERMS;
  return { features: JSON.parse(r.t_features) as string[], allowances: JSON.parse(r.t_allowances) as Record<string, number> };
}

/**
 * The join of a licence or subscription (`source`) to its plan (`p`, whose key is `id`) or
 * to its plan's terms (`pt`, keyed by `plan_id`): the same product, the plan it names.
 */
function sameProductAndPlan(source: "l" | "s", plan: "p" | "pt", planKey: "id" | "plan_id") {
  const [of, ofPlan] = [(column: string) => sql.ref(`${source}.${column}`), (column: string) => sql.ref(`${plan}.${column}`)];
  return sql<boolean>`${ofPlan("workspace_id")} = ${of("workspace_id")} and ${ofPlan("product_kind")} = ${of("product_kind")} and ${ofPlan("product_id")} = ${of("product_id")} and ${ofPlan(planKey)} = ${of("plan_id")}`;
}

/** What `toPlan` reads of the joined plan. */
const PLAN_COLUMNS = ["p.name as p_name", "p.billing", "p.amount_cents", "p.currency", "p.interval"] as const;
/** What `toTerms` reads of the joined terms. */
const TERM_COLUMNS = ["pt.features as t_features", "pt.allowances as t_allowances"] as const;

/** Licences and subscriptions for the tool itself or for a bundle that names it. */
export function coversTool(alias: "l" | "s", scope: SourceScope) {
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
    .leftJoin("plans as p", (join) => join.on(sameProductAndPlan("l", "p", "id")))
    .leftJoin("plan_terms as pt", (join) => join.on(sameProductAndPlan("l", "pt", "plan_id")).on("pt.tool_id", "=", scope.toolId))
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
      ...PLAN_COLUMNS,
      "p.gives_access",
      ...TERM_COLUMNS,
    ])
    .where(ofPerson("l.person_id", persons))
    .where(coversTool("l", scope));
}

function subscriptionsQuery(ex: Executor, scope: SourceScope, persons: PersonFilter) {
  return ex
    .selectFrom("subscriptions as s")
    .leftJoin("plans as p", (join) => join.on(sameProductAndPlan("s", "p", "id")))
    .leftJoin("plan_terms as pt", (join) => join.on(sameProductAndPlan("s", "pt", "plan_id")).on("pt.tool_id", "=", scope.toolId))
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
      ...PLAN_COLUMNS,
      ...TERM_COLUMNS,
    ])
    .where(ofPerson("s.person_id", persons))
    .where(coversTool("s", scope));
}

function grantsQuery(ex: Executor, scope: SourceScope, persons: PersonFilter) {
  return ex
    .selectFrom("grants as g")
    .leftJoin("plan_terms as pt", (join) =>
      join
        .onRef("pt.workspace_id", "=", "g.workspace_id")
        .on("pt.product_kind", "=", "tool")
        .onRef("pt.product_id", "=", "g.tool_id")
        .onRef("pt.plan_id", "=", "g.plan_id")
        .onRef("pt.tool_id", "=", "g.tool_id"),
    )
    .select(["g.id", "g.person_id", "g.kind", "g.starts_at", "g.ends_at", "g.revoked_at", "g.created_at", "g.plan_id", ...TERM_COLUMNS])
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
    givesAccess: r.gives_access === null || Number(r.gives_access) !== 0,
    terms: toTerms(r.plan_id, r),
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
    terms: toTerms(r.plan_id, r),
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
    planId: r.plan_id,
    terms: toTerms(r.plan_id, r),
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

/** The sources of the `person` of an enclosing statement, each kind a JSON array (in `dialect`'s JSON). */
function sourceArrays(ex: Executor, scope: SourceScope, dialect: Dialect) {
  const jsonArrayFrom = dialect === "postgres" ? pgJsonArrayFrom : sqliteJsonArrayFrom;
  return {
    licences: ifHeld("licences", jsonArrayFrom(licencesQuery(ex, scope, "enclosing")), dialect),
    subscriptions: ifHeld("subscriptions", jsonArrayFrom(subscriptionsQuery(ex, scope, "enclosing")), dialect),
    grants: ifHeld("grants", jsonArrayFrom(grantsQuery(ex, scope, "enclosing")), dialect),
  };
}

/** `sourceArrays` as a raw statement's columns `licences`, `subscriptions` and `grants`. */
function columnsOf({ licences, subscriptions, grants }: ReturnType<typeof sourceArrays>): RawBuilder<unknown> {
  return sql`${licences} as licences, ${subscriptions} as subscriptions, ${grants} as grants`;
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
  const { licences, subscriptions, grants } = sourceArrays(ex, oneScope(p), dialectOf(ex));
  return ex
    .selectFrom("people as person")
    .select(["person.id", "person.email", "person.signed_in_at", licences.as("licences"), subscriptions.as("subscriptions"), grants.as("grants")])
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
  return sql`select q.i, person.id, person.email, person.signed_in_at, ${columnsOf(sourceArrays(ex, scope, "postgres"))}
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
  return columnsOf(sourceArrays(ex, scope, dialectOf(ex)));
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
