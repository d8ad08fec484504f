import { toIso } from "../clock.js";
import type { Executor } from "../db/database.js";
import type { CustomerKind, Env, ProductKind } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { decodeCursor, encodeCursor } from "../http/cursor.js";
import type { RequestContext, Services } from "../services.js";
import { heldTerms } from "../usage/held-terms.js";
import { cachedToolTerms } from "../usage/terms-cache.js";
import { listBundleTools } from "../workspaces/workspace.store.js";
import { recordAccessChanges } from "./access-change.store.js";
import { nextChangeOf, tagsOf } from "./answer-cache.js";
import type { Customer, CustomerListItem, FeatureCheck, ListCustomersQuery } from "./customer.schema.js";
import {
  type CustomerRow,
  countCustomerKind,
  demoteExpiredHolders,
  findCustomerRow,
  findCustomerRows,
  findKindBoundary,
  firstToolWithCustomers,
  type KindWindow,
  type ListPosition,
  listCustomerPage,
  searchCustomerRows,
  type ToolScope,
  upsertCustomerRow,
  upsertCustomerRows,
} from "./customer.store.js";
import { findPersonWithSources, loadSources, type PersonWithSources } from "./customer-sources.store.js";
import { computeEntitlement, type Sources } from "./entitlement.js";
import { type Holdings, loadDeviceActivity, loadHoldings } from "./holdings.store.js";
import { findPeopleByIds, findPersonByEmail, findSourceHolders } from "./person.store.js";

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

/** The person of an address and their sources for the tool: from the answer cache, else read and kept there. */
async function readPersonWithSources(services: Services, scope: ToolScope, email: string, now: number): Promise<PersonWithSources | null> {
  const { answers, db } = services;
  const key = `retrieve\u0000${scope.workspaceId}\u0000${scope.env}\u0000${scope.toolId}\u0000${email}`;
  const kept = answers.get<PersonWithSources>(key);
  if (kept) return kept;
  const ticket = answers.ticket();
  const found = await findPersonWithSources(db, { scope, email });
  // An unknown address is not kept: the feed names people, and one created later has no entry to drop.
  if (found) answers.set(key, found, { ticket, tags: tagsOf(scope.workspaceId, scope.env, found.person.id), changesAt: nextChangeOf(found.sources, now) });
  return found;
}

export async function retrieveCustomer(ctx: RequestContext, toolId: string, email: string): Promise<Customer> {
  const scope = await requireLookupScope(ctx, toolId);
  return (await customerAnswer(ctx.services, scope, toolId, email)).customer;
}

/**
 * The same answer as JSON text (`serialize`: the route's own serialiser), kept in the
 * answer cache beside the sources it was made from, under the same tags and until the
 * same time, so that a repeated question is answered with the bytes already written:
 * no entitlement worked out, no terms looked up, nothing serialised.
 */
export async function retrieveCustomerJson(ctx: RequestContext, toolId: string, email: string, serialize: (customer: Customer) => string): Promise<string> {
  const scope = await requireLookupScope(ctx, toolId);
  const { answers } = ctx.services;
  const key = `retrieve-json\u0000${scope.workspaceId}\u0000${scope.env}\u0000${scope.toolId}\u0000${email}`;
  // Counted as one answer of the cache's figures: a hit here, or the sources' own get below.
  const kept = answers.get<string>(key, false);
  if (kept !== undefined) {
    answers.countHit();
    return kept;
  }
  const ticket = answers.ticket();
  const { customer, personId, changesAt } = await customerAnswer(ctx.services, scope, toolId, email);
  const json = serialize(customer);
  answers.set(key, json, { ticket, tags: tagsOf(scope.workspaceId, scope.env, personId), changesAt });
  return json;
}

/** The tool in the caller's workspace, with the lookup counted: before the read, as the specification requires (an unknown address costs a lookup too). */
async function requireLookupScope(ctx: RequestContext, toolId: string): Promise<ToolScope> {
  const scope = await requireToolScope(ctx, toolId);
  await ctx.services.limits.countLookup(ctx.services.db, ctx.principal, ctx.services.clock.now());
  return scope;
}

/** A customer's answer, with whose it is and when it may change by itself. */
async function customerAnswer(
  services: Services,
  scope: ToolScope,
  toolId: string,
  email: string,
): Promise<{ customer: Customer; personId: string; changesAt: number | null }> {
  const now = services.clock.now();
  const found = await readPersonWithSources(services, scope, email, now);
  const known =
    found !== null &&
    (found.person.signedInAt !== null || found.sources.licences.length + found.sources.subscriptions.length + found.sources.grants.length > 0);
  if (!found || !known) throw notFound(`No customer with that address for tool "${toolId}".`);
  const { person, sources } = found;

  const entitlement = computeEntitlement(sources, now);
  const terms = await cachedToolTerms(services.answers, services.db, scope.workspaceId, scope.toolId);
  const subscription = entitlement.subscription;
  const customer: Customer = {
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
    features: heldTerms(sources, terms, now).features,
  };
  return { customer, personId: person.id, changesAt: nextChangeOf(sources, now) };
}

/**
 * Whether an address holds one feature of the tool now. An address Warden does not know
 * holds nothing (enabled false, not a 404: a vendor asks for a boolean); a feature the
 * tool does not declare is a mistake of the caller's (400), never a quiet false.
 */
export async function checkFeature(ctx: RequestContext, toolId: string, email: string, feature: string): Promise<FeatureCheck> {
  const { db, clock, limits } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  // Counted before the reads, as retrieve is: an unknown address or feature costs a lookup too.
  await limits.countLookup(db, ctx.principal, clock.now());
  const now = clock.now();
  const terms = await cachedToolTerms(ctx.services.answers, db, scope.workspaceId, scope.toolId);
  if (!terms.features.includes(feature)) {
    const declared = terms.features.length === 0 ? "declares none" : `declares ${terms.features.join(", ")}`;
    throw invalidParameter("feature", `Tool "${toolId}" declares no feature "${feature}": it ${declared} (warden admin feature add).`);
  }
  const found = await readPersonWithSources(ctx.services, scope, email, now);
  if (!found) return { email, tool: toolId, feature, enabled: false, entitled: false, via: null };
  const entitlement = computeEntitlement(found.sources, now);
  return {
    email: found.person.email,
    tool: toolId,
    feature,
    enabled: heldTerms(found.sources, terms, now).features.includes(feature),
    entitled: entitlement.entitled,
    via: entitlement.via,
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

/**
 * Whose these licences, subscriptions and grants are, by id: their customer's address, for
 * the audit log to name an entry about one by (an id of another workspace environment is
 * left out, so it names nothing there).
 */
export async function customersOfSources(
  services: Pick<Services, "db">,
  scope: { workspaceId: string; env: Env },
  ids: { licences: readonly string[]; subscriptions: readonly string[]; grants: readonly string[] },
): Promise<Map<string, string>> {
  if (ids.licences.length + ids.subscriptions.length + ids.grants.length === 0) return new Map();
  return findSourceHolders(services.db, scope, ids);
}

export interface CustomerPageResult {
  data: CustomerListItem[];
  has_more: boolean;
  next_cursor: string | null;
}

/** A list as the dashboard pages it: both ways, and how many it holds. */
export interface CustomerBrowseResult extends CustomerPageResult {
  /** Pass as `before` for the page of newer rows; null on the first page. */
  previous_cursor: string | null;
  /** How many rows the list holds (the search's matches, or each kind up to its cut). */
  total: CustomerListTotal;
}

export interface CustomerListTotal {
  count: number;
  /** The kinds with more rows than the list shows (cut at LISTED_PER_KIND). */
  cut: CustomerKind[];
  /** A search with more matches than SEARCH_MATCHES: `count` is that many of them. */
  moreMatches: boolean;
}

/** What the dashboard asks beyond the API's parameters. */
export interface BrowseOptions {
  /**
   * Lapsed customers (known only through access that has ended, who never signed in:
   * kind `none`) are listed too, among those who do not hold the tool. The API lists
   * the tool's holders and signed-in people only, as the specification says.
   */
  lapsed: boolean;
  /** Part of the address: see `searchCustomerRows`. */
  search?: string;
  /** A cursor to page towards the newest from (`previous_cursor`). */
  before?: string;
}

/** A search reads at most this many matches: past it, typing more of the address narrows it. */
export const SEARCH_MATCHES = 1_000;

interface ListFilter {
  entitled: boolean | undefined;
  lapsed: boolean;
  search: string | undefined;
}

function kindsOf(filter: ListFilter): CustomerKind[] {
  if (filter.entitled === true) return ["holder"];
  const notHolding: CustomerKind[] = filter.lapsed ? ["member", "none"] : ["member"];
  return filter.entitled === false ? notHolding : ["holder", ...notHolding];
}

function cursorContextOf(scope: ToolScope, filter: ListFilter): string {
  const shown = filter.entitled === undefined ? "all" : filter.entitled ? "entitled" : "not_entitled";
  const search = filter.search === undefined ? "" : `|search:${filter.search}`;
  return `customers|${scope.workspaceId}|${scope.env}|${scope.toolId}|${shown}${filter.lapsed ? "+lapsed" : ""}${search}`;
}

const newestFirst = (a: ListPosition, b: ListPosition) => b.since - a.since || (a.personId < b.personId ? 1 : a.personId > b.personId ? -1 : 0);
const isOlder = (a: ListPosition, than: ListPosition) => newestFirst(a, than) > 0;

/** The list's rows in `direction` from a position: the kinds' walks, or the search's matches in the same order. */
async function readPositions(
  ex: Executor,
  scope: ToolScope,
  filter: ListFilter,
  from: { after: ListPosition | null; before: ListPosition | null },
  limit: number,
): Promise<{ rows: (ListPosition & { kind: CustomerKind })[]; matches: (ListPosition & { kind: CustomerKind })[] | null }> {
  const kinds = kindsOf(filter);
  if (filter.search !== undefined) {
    // The matches are at most SEARCH_MATCHES + 1, so they are ordered and paged here.
    const matches = await searchCustomerRows(ex, scope, { kinds, text: filter.search, limit: SEARCH_MATCHES + 1 });
    const shown = matches.slice(0, SEARCH_MATCHES).sort(newestFirst);
    const { after, before } = from;
    if (before)
      return {
        rows: shown
          .filter((r) => isOlder(before, r))
          .reverse()
          .slice(0, limit),
        matches,
      };
    return { rows: shown.filter((r) => after === null || isOlder(r, after)).slice(0, limit), matches };
  }
  const windows: KindWindow[] = [];
  for (const kind of kinds) windows.push({ kind, boundary: await findKindBoundary(ex, scope, kind, LISTED_PER_KIND) });
  return { rows: await listCustomerPage(ex, scope, { windows, after: from.after, before: from.before, limit }), matches: null };
}

/** The list items of these rows, by the same rule as the API's answer. */
async function toListItems(ctx: RequestContext, scope: ToolScope, page: readonly ListPosition[]): Promise<CustomerListItem[]> {
  const { db, clock } = ctx.services;
  const ids = page.map((r) => r.personId);
  const [people, sources, activity] = [await findPeopleByIds(db, ids), await loadSources(db, scope, ids), await loadDeviceActivity(db, scope, ids)];
  const answeredAt = clock.now();
  return page.map((row): CustomerListItem => {
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
}

async function totalOf(ex: Executor, scope: ToolScope, filter: ListFilter, matches: readonly unknown[] | null): Promise<CustomerListTotal> {
  if (matches !== null) return { count: Math.min(matches.length, SEARCH_MATCHES), cut: [], moreMatches: matches.length > SEARCH_MATCHES };
  let count = 0;
  const cut: CustomerKind[] = [];
  for (const kind of kindsOf(filter)) {
    const n = await countCustomerKind(ex, scope, kind, LISTED_PER_KIND + 1);
    count += Math.min(n, LISTED_PER_KIND);
    if (n > LISTED_PER_KIND) cut.push(kind);
  }
  return { count, cut, moreMatches: false };
}

/** The API's list of customers: newest first, forwards, each list page counted against the per-minute page limit and the rows read. */
export async function listCustomers(ctx: RequestContext, toolId: string, query: ListCustomersQuery): Promise<CustomerPageResult> {
  const { data, has_more, next_cursor } = await readCustomerList(ctx, toolId, query, { lapsed: false }, { countPage: true, total: false });
  return { data, has_more, next_cursor };
}

/**
 * The dashboard's list of customers: the API's list, plus lapsed customers, a search by
 * part of the address, paging both ways and the list's total. Its pages count their rows
 * read as the API's do, but not against the API's list pages per minute, which the
 * vendor's own server needs (a person clicking through the list used them up).
 */
/**
 * The tool the dashboard's list opens on when the address names none: the first, in the
 * tools' order, with a customer in the environment, so a vendor whose first tool has
 * nobody yet does not open on an empty list; the first tool when none has any.
 */
export async function defaultListTool(ctx: RequestContext, toolIds: readonly string[]): Promise<string | null> {
  return (await firstToolWithCustomers(ctx.services.db, { workspaceId: ctx.principal.workspaceId, env: ctx.principal.env }, toolIds)) ?? toolIds[0] ?? null;
}

export async function browseCustomers(ctx: RequestContext, toolId: string, query: ListCustomersQuery, options: BrowseOptions): Promise<CustomerBrowseResult> {
  return readCustomerList(ctx, toolId, query, options, { countPage: false, total: true });
}

async function readCustomerList(
  ctx: RequestContext,
  toolId: string,
  query: ListCustomersQuery,
  options: BrowseOptions,
  how: { countPage: boolean; total: boolean },
): Promise<CustomerBrowseResult> {
  const { db, clock, limits, cursorKey } = ctx.services;
  const limit = query.limit ?? 50;
  const scope = await requireToolScope(ctx, toolId);
  const search = options.search?.trim().toLowerCase();
  const filter: ListFilter = { entitled: query.entitled, lapsed: options.lapsed, search: search === "" ? undefined : search };
  const cursorContext = cursorContextOf(scope, filter);
  const positionOf = (cursor: string | undefined) => {
    if (cursor === undefined) return null;
    const position = decodeCursor(cursorKey, cursorContext, cursor);
    return { since: position.at, personId: position.id };
  };
  const after = positionOf(query.cursor);
  const before = positionOf(options.before);
  const cursorOf = (row: ListPosition) => encodeCursor(cursorKey, cursorContext, { at: row.since, id: row.personId });

  const now = clock.now();
  if (how.countPage) await limits.countListPage(db, ctx.principal, now);
  const settleRows = await limits.reserveRowsRead(db, ctx.principal, limit, now);
  const readPage = async () => {
    await demoteExpiredHolders(db, scope, now);
    const read = await readPositions(db, scope, filter, { after: before ? null : after, before }, limit + 1);
    const more = read.rows.length > limit;
    const page = read.rows.slice(0, limit);
    if (before) page.reverse();
    const data = await toListItems(ctx, scope, page);
    const total = how.total ? await totalOf(db, scope, filter, read.matches) : { count: 0, cut: [], moreMatches: false };
    return { page, more, data, total };
  };
  let read: Awaited<ReturnType<typeof readPage>> | null = null;
  try {
    read = await readPage();
  } finally {
    // A page that failed still costs its one row.
    await settleRows(read?.data.length ?? 0);
  }
  const { page, more, data, total } = read;
  const first = page[0];
  const last = page[page.length - 1];
  // Paging towards the newest, `more` says whether newer rows are left; the older ones are where it came from.
  const hasOlder = before ? last !== undefined : more;
  const hasNewer = before ? more : after !== null && first !== undefined;
  return {
    data,
    has_more: hasOlder,
    next_cursor: hasOlder && last ? cursorOf(last) : null,
    previous_cursor: hasNewer && first ? cursorOf(first) : null,
    total,
  };
}

/** Rows an export reads and hands on at a time: all it holds in memory. */
export const EXPORT_CHUNK = 500;

export interface CustomerExport {
  /** The rows the export will write, reserved against the day's rows read before it starts. */
  rows: number;
  /** The rows, a chunk of at most EXPORT_CHUNK at a time, read as they are asked for. */
  chunks: AsyncGenerator<CustomerListItem[]>;
}

/**
 * Every customer of the dashboard's list as filtered (not cut at the newest 2,000 of a
 * kind: the export is how a vendor gets the rest), newest first, read a chunk at a time
 * so that memory does not grow with the tool. All its rows are counted first and
 * reserved against the day's rows read, so an export that does not fit is refused
 * before it starts rather than cut short; what it did not write is given back.
 */
export async function exportCustomers(
  ctx: RequestContext,
  toolId: string,
  query: Pick<ListCustomersQuery, "entitled">,
  options: Omit<BrowseOptions, "before">,
): Promise<CustomerExport> {
  const { db, clock, limits } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  const search = options.search?.trim().toLowerCase();
  const filter: ListFilter = { entitled: query.entitled, lapsed: options.lapsed, search: search === "" ? undefined : search };
  const now = clock.now();
  await demoteExpiredHolders(db, scope, now);
  const matches =
    filter.search === undefined ? null : await searchCustomerRows(db, scope, { kinds: kindsOf(filter), text: filter.search, limit: SEARCH_MATCHES });
  // Counted no further than a day's rows read: an export past that can never fit, and a
  // count of every row costs a second at a million on PostgreSQL (whose statements
  // `warden serve` stops at 2 s).
  const countUpTo = ctx.services.config.limits.rowsReadPerDay + 1;
  let rows = matches?.length ?? 0;
  if (matches === null) for (const kind of kindsOf(filter)) rows += await countCustomerKind(db, scope, kind, countUpTo - rows);
  const settleRows = await limits.reserveRowsRead(db, ctx.principal, Math.max(1, rows), now);

  async function* chunks(): AsyncGenerator<CustomerListItem[]> {
    let written = 0;
    try {
      if (matches !== null) {
        const sorted = matches.sort(newestFirst);
        for (let i = 0; i < sorted.length; i += EXPORT_CHUNK) {
          const page = sorted.slice(i, i + EXPORT_CHUNK);
          yield await toListItems(ctx, scope, page);
          written += page.length;
        }
        return;
      }
      const windows = kindsOf(filter).map((kind): KindWindow => ({ kind, boundary: null }));
      let after: ListPosition | null = null;
      // Never more than was reserved, whatever was added meanwhile.
      while (written < rows) {
        const page = await listCustomerPage(db, scope, { windows, after, limit: Math.min(EXPORT_CHUNK, rows - written) });
        const last = page[page.length - 1];
        if (!last) return;
        yield await toListItems(ctx, scope, page);
        written += page.length;
        after = last;
      }
    } finally {
      await settleRows(written);
    }
  }
  return { rows, chunks: chunks() };
}
