import { toIso } from "../clock.js";
import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import { notFound } from "../errors/errors.js";
import { decodeCursor, encodeCursor } from "../http/cursor.js";
import type { RequestContext } from "../services.js";
import { listBundleTools } from "../workspaces/workspace.store.js";
import { recordAccessChanges } from "./access-change.store.js";
import type { Customer, CustomerListItem, ListCustomersQuery } from "./customer.schema.js";
import {
  type CustomerRow,
  demoteExpiredHolders,
  findCustomerRow,
  findCustomerRows,
  findKindBoundary,
  findPersonWithSources,
  type Holdings,
  type KindWindow,
  listCustomerPage,
  loadDeviceActivity,
  loadHoldings,
  loadSources,
  type ToolScope,
  upsertCustomerRow,
  upsertCustomerRows,
} from "./customer.store.js";
import { computeEntitlement, type Sources } from "./entitlement.js";
import { findPeopleByIds, findPersonByEmail } from "./person.store.js";

/** Each kind of customer (holders, signed-in non-holders) is listed up to its newest 2,000. */
export const LISTED_PER_KIND = 2_000;

export function toolScope(workspaceId: string, env: Env, toolId: string): ToolScope {
  return { workspaceId, env, toolId };
}

/** A person's customer row for one tool, from their sources and the row as it was; null while they have neither held it nor signed in. */
function customerRowOf(personId: string, existing: CustomerRow | null, sources: Sources, now: number, signedInAt?: number): CustomerRow | null {
  const entitlement = computeEntitlement(sources, now);
  const signedIn = existing?.signedIn === true || signedInAt !== undefined;
  const starts = [existing?.since, entitlement.firstHeldAt, signedInAt].filter((t): t is number => t !== undefined && t !== null);
  if (starts.length === 0) return null;
  return {
    personId,
    since: Math.min(...starts),
    signedIn,
    kind: entitlement.entitled ? "holder" : signedIn ? "member" : "none",
    heldUntil: entitlement.entitled ? entitlement.heldUntil : null,
  };
}

/**
 * Brings a person's customer row for one tool up to date with their sources. Every
 * write of a licence, subscription, grant or sign-in calls this in the same transaction,
 * so the list index never disagrees with the sources it summarises, and notes the change
 * in the access-change feed that wakes the person's waiting devices (client/access-watch.ts).
 */
export async function syncCustomer(ex: Executor, scope: ToolScope, personId: string, now: number, signedInAt?: number): Promise<CustomerRow | null> {
  await recordAccessChanges(ex, scope.workspaceId, scope.env, [personId], now);
  const existing = await findCustomerRow(ex, scope, personId);
  const sources = (await loadSources(ex, scope, [personId])).get(personId);
  if (!sources) return null;
  const row = customerRowOf(personId, existing, sources, now, signedInAt);
  if (row) await upsertCustomerRow(ex, scope, row);
  return row;
}

/**
 * syncCustomer for several people at once (a bundle that names a tool more or less, a
 * batch of an import): a few statements a batch. `signedInAt` has the sign-in of those
 * who signed in to the tool.
 */
export async function syncCustomers(
  ex: Executor,
  scope: ToolScope,
  personIds: readonly string[],
  now: number,
  signedInAt?: ReadonlyMap<string, number>,
): Promise<void> {
  await recordAccessChanges(ex, scope.workspaceId, scope.env, personIds, now);
  const [existing, sources] = await Promise.all([findCustomerRows(ex, scope, personIds), loadSources(ex, scope, personIds)]);
  const rows: CustomerRow[] = [];
  for (const personId of personIds) {
    const own = sources.get(personId);
    const row = own ? customerRowOf(personId, existing.get(personId) ?? null, own, now, signedInAt?.get(personId)) : null;
    if (row) rows.push(row);
  }
  await upsertCustomerRows(ex, scope, rows);
}

/** Which of these people hold the tool now, by the same rule as the API's answer. */
export async function entitledAmong(ex: Executor, scope: ToolScope, personIds: readonly string[], now: number): Promise<Set<string>> {
  const sources = await loadSources(ex, scope, personIds);
  return new Set([...sources].filter(([, own]) => computeEntitlement(own, now).entitled).map(([personId]) => personId));
}

/** The tools a product covers: the tool itself, or every tool a bundle names. */
export async function toolsOfProduct(ex: Executor, workspaceId: string, kind: ProductKind, productId: string): Promise<string[]> {
  return kind === "tool" ? [productId] : listBundleTools(ex, workspaceId, productId);
}

/** The tool in the caller's workspace, or 404 whether it is missing or another workspace's. */
export async function requireToolScope(ctx: RequestContext, toolId: string): Promise<ToolScope> {
  const { principal, services } = ctx;
  if (!(await services.knownTools.exists(services.db, principal.workspaceId, toolId))) throw notFound(`No tool "${toolId}" in this workspace.`);
  return toolScope(principal.workspaceId, principal.env, toolId);
}

const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(ms));

export async function retrieveCustomer(ctx: RequestContext, toolId: string, email: string): Promise<Customer> {
  const { db, clock, limits } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  // Counted before the read, as the specification requires: an unknown address costs a lookup too.
  await limits.countLookup(db, ctx.principal, clock.now());
  const now = clock.now();
  const found = await findPersonWithSources(db, { scope, email });
  const known =
    found !== null &&
    (found.person.signedInAt !== null || found.sources.licences.length + found.sources.subscriptions.length + found.sources.grants.length > 0);
  if (!found || !known) throw notFound(`No customer with that address for tool "${toolId}".`);
  const { person, sources } = found;

  const entitlement = computeEntitlement(sources, now);
  const subscription = entitlement.subscription;
  return {
    email: person.email,
    account: person.signedInAt !== null,
    entitled: entitlement.entitled,
    via: entitlement.via,
    paid_at: isoOrNull(entitlement.paidAt),
    plan: entitlement.plan,
    subscription: subscription
      ? {
          status: subscription.status,
          periodEnd: toIso(subscription.periodEnd),
          cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
          cancelAt: isoOrNull(subscription.cancelAt),
        }
      : null,
    trial: entitlement.trial ? { endsAt: toIso(entitlement.trial.endsAt), active: entitlement.trial.active } : null,
  };
}

/**
 * A customer's licences, subscriptions and devices for one tool, for the dashboard's
 * page of that customer. Not counted as a lookup: the page has counted its retrieve of
 * the same customer already, and this only details what that retrieve summarised.
 */
export async function customerHoldings(ctx: RequestContext, toolId: string, email: string): Promise<Holdings> {
  const scope = await requireToolScope(ctx, toolId);
  const person = await findPersonByEmail(ctx.services.db, scope.workspaceId, scope.env, email);
  if (!person) return { licences: [], subscriptions: [], devices: [] };
  return loadHoldings(ctx.services.db, scope, person.id);
}

export interface CustomerPageResult {
  data: CustomerListItem[];
  has_more: boolean;
  next_cursor: string | null;
}

export async function listCustomers(ctx: RequestContext, toolId: string, query: ListCustomersQuery): Promise<CustomerPageResult> {
  const { db, clock, limits, cursorKey } = ctx.services;
  const limit = query.limit ?? 50;
  const scope = await requireToolScope(ctx, toolId);
  const filter = query.entitled === undefined ? "all" : query.entitled ? "entitled" : "not_entitled";
  const cursorContext = `customers|${scope.workspaceId}|${scope.env}|${toolId}|${filter}`;
  const position = query.cursor === undefined ? null : decodeCursor(cursorKey, cursorContext, query.cursor);
  const after = position && { since: position.at, personId: position.id };

  const now = clock.now();
  await limits.countListPage(db, ctx.principal, now);
  const settleRows = await limits.reserveRowsRead(db, ctx.principal, limit, now);
  const readPage = async () => {
    await demoteExpiredHolders(db, scope, now);
    const kinds = query.entitled === undefined ? (["holder", "member"] as const) : query.entitled ? (["holder"] as const) : (["member"] as const);
    const windows: KindWindow[] = [];
    for (const kind of kinds) windows.push({ kind, boundary: await findKindBoundary(db, scope, kind, LISTED_PER_KIND) });
    const rows = await listCustomerPage(db, scope, { windows, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const ids = page.map((r) => r.personId);

    const [people, sources, activity] = [await findPeopleByIds(db, ids), await loadSources(db, scope, ids), await loadDeviceActivity(db, scope, ids)];
    const answeredAt = clock.now();
    const data = page.map((row): CustomerListItem => {
      const person = people.get(row.personId);
      const personSources = sources.get(row.personId);
      if (!person || !personSources) throw new Error(`customer row without its person ${row.personId}`);
      const entitlement = computeEntitlement(personSources, answeredAt);
      const devices = activity.get(row.personId);
      return {
        email: person.email,
        account: person.signedInAt !== null,
        entitled: entitlement.entitled,
        via: entitlement.via,
        since: toIso(row.since),
        last_active_at: isoOrNull(devices?.lastActiveAt ?? null),
        devices: devices?.devices ?? 0,
      };
    });
    return { rows, page, data };
  };
  let read: Awaited<ReturnType<typeof readPage>> | null = null;
  try {
    read = await readPage();
  } finally {
    // A page that failed still costs its one row.
    await settleRows(read?.data.length ?? 0);
  }
  const { rows, page, data } = read;

  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  return { data, has_more: hasMore, next_cursor: hasMore && last ? encodeCursor(cursorKey, cursorContext, { at: last.since, id: last.personId }) : null };
}
