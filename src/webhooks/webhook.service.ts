import { recordOwnerAction } from "../audit/audit.service.js";
import { DAY_MS, toIso } from "../clock.js";
import { findPersonByEmail } from "../customers/person.store.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { emitEvent } from "../events/event.service.js";
import { findEvent, findEventGists, findEventTypes, listEventsPage } from "../events/event.store.js";
import { isEventType } from "../events/event-types.js";
import { exampleEvent } from "../events/examples.js";
import { decodeCursor, encodeCursor } from "../http/cursor.js";
import { newId } from "../ids.js";
import type { RequestContext } from "../services.js";
import {
  countPendingDeliveries,
  countUndeliveredSince,
  failPendingDeliveries,
  findDelivery,
  listAttempts,
  listDeliveriesPage,
  queueResends,
  type Delivery as StoredDelivery,
} from "./delivery.store.js";
import {
  type Endpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints as listEndpointRows,
  markEndpointRemoved,
  rotateEndpointSecret,
  setEndpointEnabled,
  signingSecrets,
  updateEndpointSettings,
} from "./endpoint.store.js";
import { privateHostReason } from "./private-address.js";
import { newWebhookSecret } from "./signature.js";
import type { DeliveriesQuery, Delivery, EventsQuery, WebhookEndpoint, WebhookEvent } from "./webhook.schema.js";

/** How long the secret a rotation replaces keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = DAY_MS;
const DESCRIPTION_MAX = 500;
const RECOVER_WINDOWS = { hour: 3_600_000, day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS } as const;
const iso = (ms: number | null) => (ms === null ? null : toIso(ms));

/** The endpoint as the API shows it at `now` (a previous secret past its expiry is not mentioned). */
export function presentEndpoint(e: Endpoint, now: number): WebhookEndpoint {
  const overlapping = signingSecrets(e.secretSealed, e.previousSecret, now).length > 1;
  return {
    id: e.id,
    url: e.url,
    events: e.eventTypes,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    disabled_at: iso(e.disabledAt),
    last_success_at: iso(e.lastSuccessAt),
    failing_since: iso(e.failingSince),
    previous_secret_expires_at: overlapping && e.previousSecret ? toIso(e.previousSecret.expiresAt) : null,
    created_at: toIso(e.createdAt),
  };
}

function checkUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParameter("url", "url must be an absolute http:// or https:// URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidParameter("url", "url must use http or https.");
  if (url.username || url.password) throw invalidParameter("url", "url must not carry a user name or password; deliveries are signed instead.");
  // URL has already written IPv4 in any notation (2130706433, 0x7f.1, 127.1) as a dotted
  // quad, IPv6 in its compressed form, and names in lower case; a name that resolves to a
  // private address is refused when a delivery connects to it.
  const privateHost = allowPrivate ? null : privateHostReason(url.hostname);
  if (privateHost !== null) {
    throw invalidParameter(
      "url",
      `url points at a private or local host (${privateHost}); set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow that (local development only).`,
    );
  }
  return url.toString();
}

function checkEventTypes(types: string[] | undefined): string[] | null {
  if (types === undefined) return null;
  for (const type of types) if (!isEventType(type)) throw invalidParameter("events", `Unknown event type "${type}".`);
  return [...new Set(types)];
}

/** A description as typed: trimmed, at most DESCRIPTION_MAX characters; empty is none. */
function checkDescription(raw: string | null | undefined): string | null {
  const description = raw?.trim() ?? "";
  if (description.length > DESCRIPTION_MAX) throw invalidParameter("description", `description is longer than ${DESCRIPTION_MAX} characters.`);
  return description === "" ? null : description;
}

async function requireEndpoint(ctx: RequestContext, id: string): Promise<Endpoint> {
  const endpoint = await findEndpoint(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, id);
  if (!endpoint) throw notFound(`No webhook endpoint "${id}".`);
  return endpoint;
}

export async function addEndpoint(
  ctx: RequestContext,
  input: { url: string; events?: string[]; description?: string },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { db, clock, secretBox, config } = ctx.services;
  const secret = newWebhookSecret();
  const endpoint: Endpoint = {
    id: newId("ep"),
    workspaceId: ctx.principal.workspaceId,
    env: ctx.principal.env,
    url: checkUrl(input.url, config.allowPrivateWebhooks),
    eventTypes: checkEventTypes(input.events),
    description: checkDescription(input.description),
    secretSealed: secretBox.seal(secret),
    previousSecret: null,
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    lastSuccessAt: null,
    failingSince: null,
    createdAt: clock.now(),
  };
  // The endpoint and its delivery lease row, together.
  await db.transaction().execute(async (trx) => {
    await insertEndpoint(trx, endpoint);
    await recordOwnerAction(trx, ctx, "endpoint.added", endpoint.id, endpoint.createdAt);
  });
  return { endpoint: presentEndpoint(endpoint, endpoint.createdAt), secret };
}

export async function listEndpoints(ctx: RequestContext): Promise<{ data: WebhookEndpoint[] }> {
  const rows = await listEndpointRows(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env);
  const now = ctx.services.clock.now();
  return { data: rows.map((e) => presentEndpoint(e, now)) };
}

export async function getEndpoint(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  return presentEndpoint(await requireEndpoint(ctx, id), ctx.services.clock.now());
}

export async function revealSecret(ctx: RequestContext, id: string): Promise<{ secret: string }> {
  const endpoint = await requireEndpoint(ctx, id);
  // An owner reading a secret is worth a record; the API's key holder could read it any time.
  await ctx.services.db.transaction().execute((trx) => recordOwnerAction(trx, ctx, "endpoint.secret_revealed", id, ctx.services.clock.now()));
  return { secret: ctx.services.secretBox.open(endpoint.secretSealed) };
}

/**
 * A new signing secret, answered once (as when the endpoint was added; revealSecret shows
 * it later). The secret it replaces keeps signing beside it for ROTATION_OVERLAP_MS: every
 * delivery attempted meanwhile carries both signatures, so a receiver can switch over
 * whenever it likes within the day. Rotating again meanwhile drops the oldest secret: the
 * one being replaced becomes the previous, for a fresh 24 hours.
 */
export async function rotateSecret(ctx: RequestContext, id: string): Promise<{ secret: string; previous_secret_expires_at: string }> {
  const { db, clock, secretBox } = ctx.services;
  await requireEndpoint(ctx, id);
  const secret = newWebhookSecret();
  const now = clock.now();
  const expiresAt = now + ROTATION_OVERLAP_MS;
  await db.transaction().execute(async (trx) => {
    // Removed since it was found: no secret is answered that nothing signs with.
    if (!(await rotateEndpointSecret(trx, id, secretBox.seal(secret), expiresAt))) throw notFound(`No webhook endpoint "${id}".`);
    await recordOwnerAction(trx, ctx, "endpoint.secret_rotated", id, now);
  });
  return { secret, previous_secret_expires_at: toIso(expiresAt) };
}

/**
 * Changes what a vendor chose of an endpoint: its URL (checked as when it was added), the
 * event types it receives (`null`: every type), its description. Absent fields stay as
 * they are. Deliveries already queued keep going to the endpoint, to its new URL.
 */
export async function updateEndpoint(
  ctx: RequestContext,
  id: string,
  input: { url?: string; events?: string[] | null; description?: string | null },
): Promise<WebhookEndpoint> {
  const { db, clock, config } = ctx.services;
  const endpoint = await requireEndpoint(ctx, id);
  const settings = {
    url: input.url === undefined ? endpoint.url : checkUrl(input.url, config.allowPrivateWebhooks),
    eventTypes: input.events === undefined ? endpoint.eventTypes : input.events === null ? null : checkEventTypes(input.events),
    description: input.description === undefined ? endpoint.description : checkDescription(input.description),
  };
  if (settings.eventTypes !== null && settings.eventTypes.length === 0)
    throw invalidParameter("events", "Choose at least one event type, or none to send every type.");
  const now = clock.now();
  await db.transaction().execute(async (trx) => {
    if (!(await updateEndpointSettings(trx, id, settings))) throw notFound(`No webhook endpoint "${id}".`);
    await recordOwnerAction(trx, ctx, "endpoint.updated", id, now);
  });
  return presentEndpoint({ ...endpoint, ...settings }, now);
}

/** The endpoint stops receiving anything; its row and deliveries stay, so the log still names it. */
export async function removeEndpoint(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  const { db, clock } = ctx.services;
  const endpoint = await requireEndpoint(ctx, id);
  await db.transaction().execute(async (trx) => {
    await markEndpointRemoved(trx, id, clock.now());
    await failPendingDeliveries(trx, id, "endpoint removed");
    await recordOwnerAction(trx, ctx, "endpoint.removed", id, clock.now());
  });
  return presentEndpoint({ ...endpoint, enabled: false }, clock.now());
}

export async function setEnabled(ctx: RequestContext, id: string, enabled: boolean): Promise<WebhookEndpoint> {
  const { db, clock } = ctx.services;
  await requireEndpoint(ctx, id);
  await db.transaction().execute(async (trx) => {
    await setEndpointEnabled(trx, id, enabled, enabled ? null : "manual", clock.now());
    if (!enabled) await failPendingDeliveries(trx, id, "endpoint disabled (manual)");
    await recordOwnerAction(trx, ctx, enabled ? "endpoint.enabled" : "endpoint.disabled", id, clock.now());
  });
  return presentEndpoint(await requireEndpoint(ctx, id), clock.now());
}

/** How many deliveries of the endpoint wait to be sent: what disabling or removing it marks failed. */
export async function countWaitingDeliveries(ctx: RequestContext, id: string): Promise<number> {
  await requireEndpoint(ctx, id);
  return countPendingDeliveries(ctx.services.db, id);
}

/**
 * Queues one new attempt for every failed delivery of the endpoint created in the window,
 * and with `includeRetrying` for every one still being retried too (an attempt now, its
 * schedule kept, as a resend).
 */
export async function recoverEndpoint(
  ctx: RequestContext,
  id: string,
  since: keyof typeof RECOVER_WINDOWS,
  options: { includeRetrying?: boolean } = {},
): Promise<{ queued: number }> {
  const { db, clock } = ctx.services;
  const endpoint = await requireEndpoint(ctx, id);
  if (!endpoint.enabled) throw invalidParameter("id", "The endpoint is disabled; enable it before recovering its deliveries.");
  const now = clock.now();
  const ids = await recoverableIds(ctx, id, "failed", now - RECOVER_WINDOWS[since]);
  if (options.includeRetrying) ids.push(...(await recoverableIds(ctx, id, "retrying", now - RECOVER_WINDOWS[since])));
  await db.transaction().execute(async (trx) => {
    await queueResends(trx, ids, now);
    await recordOwnerAction(trx, ctx, "endpoint.recovered", id, now);
  });
  ctx.services.signals.wakeDelivery();
  return { queued: ids.length };
}

async function recoverableIds(ctx: RequestContext, id: string, state: "failed" | "retrying", since: number): Promise<string[]> {
  const { db } = ctx.services;
  const ids: string[] = [];
  const status = state === "failed" ? "failed" : "pending";
  let after: { createdAt: number; id: string } | null = null;
  for (;;) {
    const page = await listDeliveriesPage(db, ctx.principal.workspaceId, ctx.principal.env, { endpointId: id, status, since }, { after, limit: 500 });
    // Retrying: tried and due again on its schedule (a resend queued already is left as it is).
    ids.push(...page.filter((d) => state === "failed" || (d.attempts > 0 && !d.oneShot)).map((d) => d.id));
    const last = page[page.length - 1];
    if (!last || page.length < 500) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return ids;
}

type RecoverWindows = Record<keyof typeof RECOVER_WINDOWS, number>;

/**
 * How many deliveries `recoverEndpoint` would attempt again, for each window it takes:
 * the failed ones, and under `retrying` those still being retried, which it attempts
 * too when asked to include them.
 */
export async function countRecoverable(ctx: RequestContext, id: string): Promise<RecoverWindows & { retrying: RecoverWindows }> {
  await requireEndpoint(ctx, id);
  const now = ctx.services.clock.now();
  const since = {
    hour: now - RECOVER_WINDOWS.hour,
    day: now - RECOVER_WINDOWS.day,
    week: now - RECOVER_WINDOWS.week,
    month: now - RECOVER_WINDOWS.month,
  };
  const { db } = ctx.services;
  const { workspaceId, env } = ctx.principal;
  const [failed, retrying] = await Promise.all([
    countUndeliveredSince(db, workspaceId, env, id, "failed", since),
    countUndeliveredSince(db, workspaceId, env, id, "retrying", since),
  ]);
  return { ...failed, retrying };
}

async function presentDeliveries(ctx: RequestContext, rows: StoredDelivery[]): Promise<Delivery[]> {
  const attempts = await listAttempts(
    ctx.services.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    endpoint: r.endpointId,
    event: r.eventId,
    status: r.status,
    attempts: (attempts.get(r.id) ?? []).map((a) => ({
      attempted_at: toIso(a.attemptedAt),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      response_body: a.responseBody,
      error: a.error,
      manual: a.manual,
    })),
    next_attempt_at: iso(r.nextAttemptAt),
    created_at: toIso(r.createdAt),
  }));
}

export async function getDelivery(ctx: RequestContext, id: string): Promise<Delivery> {
  const row = await findDelivery(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, id);
  if (!row) throw notFound(`No delivery "${id}".`);
  const [delivery] = await presentDeliveries(ctx, [row]);
  return delivery as Delivery;
}

/**
 * One manual attempt now, with the same webhook-id; not a new schedule. A delivery still
 * being retried keeps its schedule: the attempt goes now, a success settles it, a
 * failure leaves its next scheduled retry where it was, and the manual attempt does not
 * count among the schedule's ten. Resending it again before the attempt is made queues
 * nothing more.
 */
export async function resendDelivery(ctx: RequestContext, id: string): Promise<Delivery> {
  const { db, clock } = ctx.services;
  const row = await findDelivery(db, ctx.principal.workspaceId, ctx.principal.env, id);
  if (!row) throw notFound(`No delivery "${id}".`);
  const endpoint = await findEndpoint(db, ctx.principal.workspaceId, ctx.principal.env, row.endpointId);
  // The worker sends nothing to a disabled endpoint: the resend would wait, unseen, for it to be enabled.
  if (!endpoint?.enabled) throw invalidParameter("id", "This delivery's endpoint is disabled or removed; enable it before resending.");
  await db.transaction().execute(async (trx) => {
    await queueResends(trx, [id], clock.now());
    await recordOwnerAction(trx, ctx, "delivery.resent", id, clock.now());
  });
  ctx.services.signals.wakeDelivery();
  return getDelivery(ctx, id);
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A time bound of a list, as Stripe's vendors write it (epoch seconds) or as Svix's do
 * (ISO 8601 with a time zone, which says what instant it is), in milliseconds.
 */
function timeBound(param: "created_after" | "created_before", value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,12}$/.test(value)) return Number(value) * 1000;
  const parts = ISO_TIME.exec(value);
  const ms = parts ? Date.parse(value) : Number.NaN;
  // Date.parse takes 2026-02-31 for 3 March: the day must exist in its month.
  const [, year, month, day] = parts ?? [];
  const real = parts !== null && new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).getUTCDate() === Number(day);
  if (!real || Number.isNaN(ms)) {
    throw invalidParameter(param, `${param} must be epoch seconds (1764126000) or an ISO 8601 time with a time zone (2026-11-26T03:00:00Z).`);
  }
  return ms;
}

/** The created_after/created_before range of a list query; an empty range is a mistake, not an empty page. */
function createdRange(query: { created_after?: string; created_before?: string }): { since?: number; before?: number } {
  const since = timeBound("created_after", query.created_after);
  const before = timeBound("created_before", query.created_before);
  if (since !== undefined && before !== undefined && since >= before)
    throw invalidParameter("created_before", "created_before must be later than created_after.");
  return { since, before };
}

const NO_PAGE = { data: [], has_more: false, next_cursor: null };

/**
 * The person a `customer` filter names in the workspace environment: their id, "none"
 * when the address is nobody's here (the list is empty), undefined when no filter.
 */
async function customerFilter(ctx: RequestContext, customer: string | undefined): Promise<string | undefined | "none"> {
  if (customer === undefined) return undefined;
  const person = await findPersonByEmail(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, customer.trim());
  return person?.id ?? "none";
}

export async function listDeliveries(
  ctx: RequestContext,
  query: DeliveriesQuery,
): Promise<{ data: Delivery[]; has_more: boolean; next_cursor: string | null }> {
  const { db, cursorKey } = ctx.services;
  const limit = query.limit ?? 20;
  const { since, before } = createdRange(query);
  const personId = await customerFilter(ctx, query.customer);
  if (personId === "none") return NO_PAGE;
  // The range, as instants, is part of what the cursor is of: a page of one range is no position in another.
  const context = `deliveries|${ctx.principal.workspaceId}|${ctx.principal.env}|${query.endpoint ?? ""}|${query.event ?? ""}|${query.status ?? ""}|${since ?? ""}|${before ?? ""}|${personId ?? ""}`;
  const position = query.cursor === undefined ? null : decodeCursor(cursorKey, context, query.cursor);
  const rows = await listDeliveriesPage(
    db,
    ctx.principal.workspaceId,
    ctx.principal.env,
    { endpointId: query.endpoint, eventId: query.event, status: query.status, since, before, ...(personId === undefined ? {} : { personId }) },
    { after: position && { createdAt: position.at, id: position.id }, limit: limit + 1 },
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  return {
    data: await presentDeliveries(ctx, page),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(cursorKey, context, { at: last.createdAt, id: last.id }) : null,
  };
}

export async function listEvents(ctx: RequestContext, query: EventsQuery): Promise<{ data: WebhookEvent[]; has_more: boolean; next_cursor: string | null }> {
  const { db, cursorKey } = ctx.services;
  const limit = query.limit ?? 20;
  const { since, before } = createdRange(query);
  const personId = await customerFilter(ctx, query.customer);
  if (personId === "none") return NO_PAGE;
  const context = `events|${ctx.principal.workspaceId}|${ctx.principal.env}|${query.type ?? ""}|${since ?? ""}|${before ?? ""}|${personId ?? ""}`;
  const position = query.cursor === undefined ? null : decodeCursor(cursorKey, context, query.cursor);
  const rows = await listEventsPage(db, ctx.principal.workspaceId, ctx.principal.env, {
    after: position && { createdAt: position.at, id: position.id },
    limit: limit + 1,
    type: query.type,
    since,
    before,
    ...(personId === undefined ? {} : { personId }),
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  return {
    data: page.map((e) => JSON.parse(e.body) as WebhookEvent),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(cursorKey, context, { at: last.createdAt, id: last.id }) : null,
  };
}

/**
 * The type of each of these events, by id: a delivery names its event by id only, and the
 * dashboard's lists of deliveries lead with what was sent (one query for a page of them).
 */
export async function eventTypesOf(ctx: RequestContext, ids: readonly string[]): Promise<Map<string, string>> {
  return findEventTypes(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, ids);
}

/** What the dashboard's lists say of an event besides its type: the customer it is about and the money it names. */
export interface EventSummary {
  type: string;
  /** The payload's address, else the address of the person the event is about; null when neither. */
  email: string | null;
  /** The payload's amount, in minor units, with its currency; null when it names none. */
  amountCents: number | null;
  currency: string | null;
}

/**
 * The summary of each of these events, by id (one query for a page of them): a list of
 * events or deliveries names the customer and the amount, not only the type. An id the
 * workspace environment does not hold is left out.
 */
export async function eventSummariesOf(ctx: RequestContext, ids: readonly string[]): Promise<Map<string, EventSummary>> {
  const gists = await findEventGists(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, ids);
  return new Map(
    [...gists].map(([id, gist]) => {
      const data = (JSON.parse(gist.body) as { data?: { email?: unknown; amount?: unknown; currency?: unknown } }).data ?? {};
      const amount = typeof data.amount === "number" && typeof data.currency === "string" ? { amountCents: data.amount, currency: data.currency } : null;
      return [
        id,
        {
          type: gist.type,
          email: typeof data.email === "string" ? data.email : gist.email,
          amountCents: amount?.amountCents ?? null,
          currency: amount?.currency ?? null,
        },
      ];
    }),
  );
}

/** One event as it was sent: the exact signed JSON text, and whether it was an example. */
export async function getEvent(ctx: RequestContext, id: string): Promise<{ event: WebhookEvent; body: string; example: boolean }> {
  const row = await findEvent(ctx.services.db, ctx.principal.workspaceId, ctx.principal.env, id);
  if (!row) throw notFound(`No event "${id}".`);
  return { event: JSON.parse(row.body) as WebhookEvent, body: row.body, example: row.example };
}

/**
 * An example event through the service: stored, delivered to every enabled endpoint of
 * the environment with its own secret (or, with `endpoint`, to that one only, which must
 * be enabled and listen for the type), logged and retried like any event. Counted
 * against the workspace's example events for the day (shared with the CLI's local sends).
 */
export async function sendExample(
  ctx: RequestContext,
  type: string,
  options: { deliver?: boolean; endpoint?: string } = {},
): Promise<{ event: WebhookEvent; deliveries: number }> {
  if (!isEventType(type)) throw invalidParameter("type", `Unknown event type "${type}".`);
  const { deliver = true } = options;
  if (!deliver && options.endpoint !== undefined) throw invalidParameter("endpoint", "An example that is not delivered goes to no endpoint.");
  const target = options.endpoint === undefined ? null : await requireEndpoint(ctx, options.endpoint);
  if (target && !target.enabled) throw invalidParameter("endpoint", "The endpoint is disabled; enable it before sending it a test event.");
  if (target?.eventTypes && !target.eventTypes.includes(type)) {
    throw invalidParameter("type", `The endpoint does not listen for ${type}; choose one of its event types (${target.eventTypes.join(", ")}).`);
  }
  const { db, clock, limits } = ctx.services;
  const result = await db.transaction().execute(async (trx) => {
    const now = clock.now();
    await limits.countExampleEvent(trx, ctx.principal, now);
    const example = exampleEvent(type, { livemode: ctx.principal.env === "live", now });
    if (!deliver) return { event: example as unknown as WebhookEvent, deliveries: 0 };
    const endpoints =
      target === null ? (await listEndpointRows(trx, ctx.principal.workspaceId, ctx.principal.env)).filter((e) => e.enabled).map((e) => e.id) : [target.id];
    await emitEvent(trx, {
      workspaceId: ctx.principal.workspaceId,
      env: ctx.principal.env,
      id: example.id,
      type,
      data: example.data,
      createdAt: now,
      example: true,
      endpointIds: endpoints,
    });
    await recordOwnerAction(trx, ctx, "event.example_sent", example.id, now);
    return { event: example as unknown as WebhookEvent, deliveries: endpoints.length };
  });
  ctx.services.signals.wakeDelivery();
  return result;
}
