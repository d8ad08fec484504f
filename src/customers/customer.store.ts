// The customer list's rows (one per person and tool: holder, lapsed buyer or signed in),
// kept by syncCustomer, and the list's pages, counts and search over them.
import { sql } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
import type { CustomerKind, Env, ProductKind } from "../db/schema.js";

export interface ToolScope {
  workspaceId: string;
  env: Env;
  toolId: string;
}

export interface CustomerRow {
  personId: string;
  since: number;
  signedIn: boolean;
  kind: CustomerKind;
  heldUntil: number | null;
}

/** The first of these tools, in their order, that has a customer in the environment (a probe of the key per tool until one answers); null when none has. */
export async function firstToolWithCustomers(ex: Executor, scope: { workspaceId: string; env: Env }, toolIds: readonly string[]): Promise<string | null> {
  for (const toolId of toolIds) {
    const row = await ex
      .selectFrom("customers")
      .select("tool_id")
      .where("workspace_id", "=", scope.workspaceId)
      .where("env", "=", scope.env)
      .where("tool_id", "=", toolId)
      .limit(1)
      .executeTakeFirst();
    if (row) return toolId;
  }
  return null;
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
