// Reading and spending a person's meters (issue 46): the vendor's API by address, the
// client API for a device's person. A spend serialises on its meter's lock row, reads
// what is left, and draws all of it or nothing, in one transaction, which also counts
// the units in the day's figure for Insights and notes an allowance that ran out.
import { createHash } from "node:crypto";
import { requireSignedIn } from "../client/client.service.js";
import type { DeviceSession, PersonScope } from "../client/device-session.store.js";
import { utcDayOf } from "../clock.js";
import { requireToolScope, toolScope } from "../customers/customer.service.js";
import type { ToolScope } from "../customers/customer.store.js";
import { loadSources } from "../customers/customer-sources.store.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import type { Sources } from "../customers/entitlement.js";
import { ensurePerson, findPersonByEmail } from "../customers/person.store.js";
import { type Executor, holdWriteLock } from "../db/database.js";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import { claimOrReplayMany } from "../grants/idempotency.js";
import { completeIdempotencyKeys, releaseIdempotencyKeys } from "../grants/idempotency.store.js";
import type { RequestContext, Services } from "../services.js";
import { heldTerms } from "./held-terms.js";
import { KeyedBatches, type Outcome } from "./meter-queue.js";
import { afterDraw, drawFrom, type MeterState, meterState, presentMeterUsage, refusalMessage } from "./meter-usage.js";
import { noteRunOut, ranOut } from "./run-out.js";
import { cachedToolTerms } from "./terms-cache.js";
import type { MeterUsage, SpendBody, Spent } from "./usage.schema.js";
import { addUsed, countMeterDay, lockMeter, readAvailableCredits, readUsed, takeCredits } from "./usage.store.js";
import type { DeclaredMeter, ToolTerms } from "./usage.types.js";

const NO_SOURCES: Sources = { licences: [], subscriptions: [], grants: [] };

/**
 * The tool's meters and top terms, from this process's answer cache, as the access
 * answers read them: a change of the catalogue reaches every process within a second.
 */
function toolTerms(services: Services, scope: ToolScope): Promise<ToolTerms> {
  return cachedToolTerms(services.answers, services.db, scope.workspaceId, scope.toolId);
}

/** Every meter of the tool as the person (null: nobody yet, who holds nothing) reads it now. */
async function readMeters(
  ex: Executor,
  scope: ToolScope,
  tool: ToolTerms,
  personId: string | null,
  now: number,
  only?: DeclaredMeter,
  options: { lock?: boolean } = {},
): Promise<MeterState[]> {
  const meters = only ? [only] : tool.meters;
  const sources = personId === null ? NO_SOURCES : ((await loadSources(ex, scope, [personId])).get(personId) ?? NO_SOURCES);
  const { buckets } = heldTerms(sources, tool, now);
  const ids = meters.map((m) => m.id);
  const key = { ...scope, personId: personId ?? "" };
  const since = Math.min(now, ...buckets.map((b) => b.periodStart));
  const [used, credits] = personId === null ? [[], []] : await Promise.all([readUsed(ex, key, ids, since), readAvailableCredits(ex, key, ids, now, options)]);
  return meters.map((m) => meterState(m, buckets, used, credits));
}

function requireMeter(tool: ToolTerms, meterId: string): DeclaredMeter {
  const meter = tool.meters.find((m) => m.id === meterId);
  if (!meter) {
    const declared = tool.meters.map((m) => m.id);
    throw invalidParameter(
      "meter",
      `The tool declares no meter "${meterId}"${declared.length ? `: it declares ${declared.join(", ")}` : ": it declares none"}.`,
    );
  }
  return meter;
}

function usageLimit(usage: MeterUsage, quantity: number): ApiError {
  return new ApiError("usage_limit", refusalMessage(usage, quantity), { usage });
}

/** Who spends: a vendor names an address; a device spends for its own person. */
type Spender = { email: string } | { personId: string };

export interface SpendResult {
  /** False when an Idempotency-Key replayed an earlier spend. */
  spent: boolean;
  /**
   * The answer (a `Spent`) as JSON: the text the Idempotency-Key stores is the text
   * answered, written once (and a replay answers the stored text, byte for byte).
   */
  body: string;
}

/** One spend waiting for its batch: every spend of a batch has the same scope, spender and meter. */
interface SpendRequest {
  services: Services;
  scope: ToolScope;
  spender: Spender;
  meter: DeclaredMeter;
  quantity: number;
  tool: ToolTerms;
  requestHash: string;
  /** The key as stored (a device's are its person's own), or null without an Idempotency-Key. */
  idempotencyKey: string | null;
}

// At most this many spends share a transaction: its multi-row statements stay small.
const MAX_SPENDS_PER_BATCH = 64;

// Per database: a batch is one transaction (tests run several Wardens in one process).
const spendBatches = new WeakMap<object, KeyedBatches<SpendRequest, SpendResult>>();

function batchesOf(services: Services): KeyedBatches<SpendRequest, SpendResult> {
  let batches = spendBatches.get(services.db);
  if (!batches) {
    batches = new KeyedBatches(
      (batch) => spendBatch(batch),
      MAX_SPENDS_PER_BATCH,
      (request) => request.idempotencyKey,
    );
    spendBatches.set(services.db, batches);
  }
  return batches;
}

async function spend(services: Services, scope: ToolScope, spender: Spender, body: SpendBody, idempotencyKey: string | undefined): Promise<SpendResult> {
  const quantity = body.quantity ?? 1;
  const tool = await toolTerms(services, scope);
  const meter = requireMeter(tool, body.meter);
  const who = "email" in spender ? `email:${normaliseEmail(spender.email)}` : `person:${spender.personId}`;
  const requestHash = createHash("sha256")
    .update(JSON.stringify(["usage", scope.toolId, who, meter.id, quantity]))
    .digest("hex");
  // A device's keys are its person's own: another person's same key is another spend.
  const storedKey = idempotencyKey === undefined ? null : "personId" in spender ? `device:${spender.personId}:${idempotencyKey}` : idempotencyKey;
  const queueKey = [scope.workspaceId, scope.env, scope.toolId, who, meter.id].join("\u0000");
  return batchesOf(services).add(queueKey, { services, scope, spender, meter, quantity, tool, requestHash, idempotencyKey: storedKey });
}

/** Thrown to roll back a batch that spent nothing (a person it created, the keys it claimed): its outcomes are answered as they are. */
class NothingSpent extends Error {
  constructor(readonly outcomes: Outcome<SpendResult>[]) {
    super("nothing spent");
  }
}

/**
 * A batch of spends, together (spendTogether); when that fails for anything but the
 * database being away, each spend again alone, so that one spend's fault (a broken stored
 * answer, a deadlock with another process's batch) fails that spend only, as before
 * spends were batched. Nothing of the failed batch was written: its transaction rolled back.
 */
async function spendBatch(batch: readonly SpendRequest[]): Promise<Outcome<SpendResult>[]> {
  try {
    return await spendTogether(batch);
  } catch (error) {
    if (batch.length === 1 || isDatabaseUnavailable(error)) throw error;
    const outcomes: Outcome<SpendResult>[] = [];
    for (const request of batch) {
      try {
        outcomes.push(...(await spendTogether([request])));
      } catch (alone) {
        outcomes.push({ ok: false, error: alone });
      }
    }
    return outcomes;
  }
}

/**
 * A batch of spends of one person's meter, in one transaction: the meter locked once,
 * what is left read once, then each spend drawn in turn, all of it or none, exactly as
 * one at a time; what they drew written as one sum per row. A spend refused (what is
 * left is not enough, or its Idempotency-Key came with another request) writes nothing:
 * its key is given back, and a batch that spent nothing is rolled back whole.
 */
async function spendTogether(batch: readonly SpendRequest[]): Promise<Outcome<SpendResult>[]> {
  const first = batch[0];
  if (!first) return [];
  // The first spend's terms and meter, read together: the catalogue changed meanwhile reaches the next batch.
  const { services, scope, spender, meter, tool } = first;
  const { db, clock } = services;
  const idempotencyScope = { workspaceId: scope.workspaceId, env: scope.env };
  try {
    return await db.transaction().execute(async (trx) => {
      // SQLite: the writer from the first statement, so that what is read below is what the writes change.
      await holdWriteLock(trx);
      const now = clock.now();
      const outcomes: (Outcome<SpendResult> | undefined)[] = batch.map(() => undefined);
      const claims = batch.flatMap((r) => (r.idempotencyKey === null ? [] : [{ key: r.idempotencyKey, requestHash: r.requestHash }]));
      const claimed = await claimOrReplayMany(trx, idempotencyScope, claims, now);
      for (const [i, request] of batch.entries()) {
        const earlier = request.idempotencyKey === null ? undefined : claimed.get(request.idempotencyKey);
        if (earlier && !earlier.claimed)
          outcomes[i] = "error" in earlier ? { ok: false, error: earlier.error } : { ok: true, value: { spent: false, body: earlier.responseBody } };
      }
      const toSpend = outcomes.flatMap((outcome, i) => (outcome ? [] : [i]));

      const personId = toSpend.length === 0 ? null : await spendingPerson(trx, scope, spender, tool, meter, batch, toSpend, outcomes, now);
      let spentAny = false;
      if (personId !== null) {
        const key = { ...scope, personId, meterId: meter.id };
        await lockMeter(trx, key);
        const [read] = await readMeters(trx, scope, tool, personId, now, meter, { lock: true });
        let state = read as MeterState;
        const usedUnits = new Map<string, { bucket: MeterState["buckets"][number]; units: number }>();
        const takenCredits = new Map<string, number>();
        let total = 0;
        for (const i of toSpend) {
          if (outcomes[i]) continue;
          const { quantity } = batch[i] as SpendRequest;
          const before = presentMeterUsage(state);
          const draw = drawFrom(state, quantity);
          if (!draw) {
            outcomes[i] = { ok: false, error: usageLimit(before, quantity) };
            continue;
          }
          for (const { bucket, units } of draw.buckets) {
            const id = `${bucket.bucket}\u0000${bucket.periodStart}`;
            usedUnits.set(id, { bucket, units: (usedUnits.get(id)?.units ?? 0) + units });
          }
          for (const { credit, units } of draw.credits) takenCredits.set(credit.id, (takenCredits.get(credit.id) ?? 0) + units);
          total += quantity;
          const drawnFrom = state;
          state = afterDraw(state, draw);
          const after = presentMeterUsage(state);
          if (ranOut(before, after)) await noteRunOut(trx, scope, key, drawnFrom, after, now);
          const answer: Spent = { quantity, allowed: true, ...after };
          outcomes[i] = { ok: true, value: { spent: true, body: JSON.stringify(answer) } };
        }
        spentAny = total > 0;
        for (const { bucket, units } of usedUnits.values()) await addUsed(trx, key, bucket, units);
        for (const [creditId, units] of takenCredits) await takeCredits(trx, creditId, units);
        if (spentAny) await countMeterDay(trx, key, utcDayOf(now), total);
      }

      const answered = outcomes as Outcome<SpendResult>[];
      if (!spentAny) throw new NothingSpent(answered);
      const keyed = batch.flatMap((request, i) => {
        const outcome = answered[i] as Outcome<SpendResult>;
        return request.idempotencyKey !== null && claimed.get(request.idempotencyKey)?.claimed ? [{ request, outcome }] : [];
      });
      await completeIdempotencyKeys(
        trx,
        idempotencyScope,
        keyed.flatMap(({ request, outcome }) =>
          outcome.ok ? [{ key: request.idempotencyKey as string, requestHash: request.requestHash, status: 200, responseBody: outcome.value.body }] : [],
        ),
        now,
      );
      await releaseIdempotencyKeys(
        trx,
        idempotencyScope,
        keyed.flatMap(({ request, outcome }) => (outcome.ok ? [] : [request.idempotencyKey as string])),
      );
      return answered;
    });
  } catch (error) {
    if (error instanceof NothingSpent) return error.outcomes;
    throw error;
  }
}

/**
 * The person who spends. An address Warden does not know holds nothing: only the free
 * allowance can pay, and the person is created only when some spend of the batch fits it
 * (account: false, as a grant's is); when none does, each is refused here (null).
 */
async function spendingPerson(
  trx: Executor,
  scope: ToolScope,
  spender: Spender,
  tool: ToolTerms,
  meter: DeclaredMeter,
  batch: readonly SpendRequest[],
  toSpend: readonly number[],
  outcomes: (Outcome<SpendResult> | undefined)[],
  now: number,
): Promise<string | null> {
  if ("personId" in spender) return spender.personId;
  const person = await findPersonByEmail(trx, scope.workspaceId, scope.env, spender.email);
  if (person) return person.id;
  const [nobody] = await readMeters(trx, scope, tool, null, now, meter);
  const usage = presentMeterUsage(nobody as MeterState);
  if (toSpend.some((i) => (batch[i] as SpendRequest).quantity <= usage.remaining)) {
    return (await ensurePerson(trx, scope.workspaceId, scope.env, spender.email, now)).id;
  }
  for (const i of toSpend) outcomes[i] = { ok: false, error: usageLimit(usage, (batch[i] as SpendRequest).quantity) };
  return null;
}

async function readAddressMeters(ctx: RequestContext, toolId: string, email: string): Promise<MeterState[]> {
  const { db, clock } = ctx.services;
  if (!isEmailShape(email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  const scope = await requireToolScope(ctx, toolId);
  const tool = await toolTerms(ctx.services, scope);
  const person = await findPersonByEmail(db, scope.workspaceId, scope.env, email);
  return readMeters(db, scope, tool, person?.id ?? null, clock.now());
}

/** The address's meters of the tool (vendor API). An unknown address reads as someone who holds nothing. */
export async function listUsage(ctx: RequestContext, toolId: string, email: string): Promise<{ data: MeterUsage[] }> {
  return { data: (await readAddressMeters(ctx, toolId, email)).map(presentMeterUsage) };
}

/** One meter of an address as an owner reads it: the API's usage, with the meter's name and its credits one by one. */
export interface CustomerMeter {
  name: string;
  usage: MeterUsage;
  /** The credits counted in `usage.credits`, in the order a spend takes them (soonest expiring first; null: until spent). */
  credits: { remaining: number; expiresAt: number | null }[];
}

/**
 * The dashboard's customer page: the same read as `listUsage` (so the same figures), with
 * what the API leaves to the vendor's own records, the meter's name and when each of the
 * credits expires. Counts nothing, as `listUsage` does not.
 */
export async function listCustomerMeters(ctx: RequestContext, toolId: string, email: string): Promise<CustomerMeter[]> {
  return (await readAddressMeters(ctx, toolId, email)).map((state) => ({
    name: state.meter.name,
    usage: presentMeterUsage(state),
    credits: state.credits.map((c) => ({ remaining: c.remaining, expiresAt: c.expiresAt })),
  }));
}

/** Spends units of a meter for an address (vendor API). */
export async function spendUsage(
  ctx: RequestContext,
  toolId: string,
  email: string,
  body: SpendBody,
  idempotencyKey: string | undefined,
): Promise<SpendResult> {
  if (!isEmailShape(email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  const scope = await requireToolScope(ctx, toolId);
  return spend(ctx.services, scope, { email }, body, idempotencyKey);
}

function deviceScope(session: PersonScope, toolId: string): ToolScope {
  if (toolId !== session.toolId) throw notFound(`This device is signed in to tool "${session.toolId}", not "${toolId}".`);
  return toolScope(session.workspaceId, session.env, session.toolId);
}

/** The device's person's meters of its tool (client API); the hosted Manage page's, for its signed-in person. */
export async function listDeviceUsage(services: Services, session: PersonScope, toolId: string): Promise<{ data: MeterUsage[] }> {
  const scope = deviceScope(session, toolId);
  // A licence key proves the licence, not the person: their other allowances and credits are not its to read or spend.
  requireSignedIn(session, "use your meters");
  const tool = await toolTerms(services, scope);
  const states = await readMeters(services.db, scope, tool, session.personId, services.clock.now());
  return { data: states.map(presentMeterUsage) };
}

/** Spends units of a meter for the device's person (client API). */
export async function spendDeviceUsage(
  services: Services,
  session: DeviceSession,
  toolId: string,
  body: SpendBody,
  idempotencyKey: string | undefined,
): Promise<SpendResult> {
  const scope = deviceScope(session, toolId);
  requireSignedIn(session, "use your meters");
  return spend(services, scope, { personId: session.personId }, body, idempotencyKey);
}
