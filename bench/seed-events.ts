// Webhook events written straight through the storage layer, each with one settled
// delivery to one endpoint and its one attempt: hundreds of thousands a minute, where
// emitting them one by one through the delivery path would take hours. Used by
// retention.ts (old events to prune) and by the dashboard scenario (a month of events to
// list, filter and open).
import type { Storage } from "../src/db/database.js";
import type { EventType } from "../src/events/event-types.js";
import { serializeEvent } from "../src/events/event-types.js";
import { exampleEvent } from "../src/events/examples.js";
import { newOrderedId } from "../src/ids.js";
import type { BenchWorkspace } from "./seed.js";

/** A webhook endpoint of the workspace with its delivery lease row, as `insertEndpoint` writes them. */
export async function addBenchEndpoint(storage: Storage, ws: BenchWorkspace, id: string, createdAt: number): Promise<void> {
  await storage.db
    .insertInto("webhook_endpoints")
    .values({
      id,
      workspace_id: ws.workspaceId,
      env: ws.env,
      url: "https://example.com/hook",
      event_types: null,
      secret_sealed: "x",
      enabled: 1,
      disabled_reason: null,
      disabled_at: null,
      last_success_at: null,
      failing_since: null,
      created_at: createdAt,
      removed_at: null,
    })
    .execute();
  await storage.db.insertInto("endpoint_leases").values({ endpoint_id: id, locked_until: null, locked_by: null }).execute();
}

export interface EventSeed {
  endpointId: string;
  count: number;
  /** Creation times run evenly from `oldest` (the first event) to `newest` (the last). */
  oldest: number;
  newest: number;
  /** Event ids are `evt_<idPrefix><number>`, numbered from `firstNumber`; ids and times rise together. */
  idPrefix: string;
  firstNumber?: number;
  /** The type of event `n` (0-based in this call); payment.refunded for all when not given. */
  typeOf?: (n: number) => EventType;
  /** Whether event `n`'s delivery failed (after one attempt, answered 500) rather than succeeded. */
  failed?: (n: number) => boolean;
}

// Rows per statement (the deliveries' 13 columns × 500 stay far below either engine's
// limit on parameters) and statements per transaction.
const PER_STATEMENT = 500;
const STATEMENTS_PER_TRANSACTION = 20;

/**
 * Writes `seed.count` events with their deliveries and attempts. Each body is the exact
 * text an event of its type would carry (an example's facts, this event's id and time),
 * so that pages and answers built from them cost what real ones do.
 */
export async function seedEvents(storage: Storage, ws: BenchWorkspace, seed: EventSeed, progress?: (done: number) => void): Promise<void> {
  const { db } = storage;
  const typeOf = seed.typeOf ?? (() => "payment.refunded");
  const dataOf = new Map<EventType, Record<string, unknown>>();
  const bodyOf = (type: EventType, id: string, at: number) => {
    let data = dataOf.get(type);
    if (data === undefined) {
      data = exampleEvent(type, { livemode: ws.env === "live", now: seed.newest }).data as Record<string, unknown>;
      dataOf.set(type, data);
    }
    return serializeEvent({ id, type, created: Math.floor(at / 1000), livemode: ws.env === "live", data });
  };
  const first = seed.firstNumber ?? 0;
  const span = seed.newest - seed.oldest;
  const perTransaction = STATEMENTS_PER_TRANSACTION * PER_STATEMENT;
  for (let start = 0; start < seed.count; start += perTransaction) {
    await db.transaction().execute(async (trx) => {
      for (let from = start; from < Math.min(seed.count, start + perTransaction); from += PER_STATEMENT) {
        const rows = Array.from({ length: Math.min(PER_STATEMENT, seed.count - from) }, (_, k) => {
          const n = from + k;
          const at = seed.oldest + (seed.count === 1 ? 0 : Math.floor((n / (seed.count - 1)) * span));
          const eventId = `evt_${seed.idPrefix}${String(first + n).padStart(24 - seed.idPrefix.length, "0")}`;
          const type = typeOf(n);
          return { at, eventId, type, failed: seed.failed?.(n) ?? false, deliveryId: newOrderedId("dlv", at) };
        });
        await trx
          .insertInto("events")
          .values(
            rows.map((r) => ({
              workspace_id: ws.workspaceId,
              env: ws.env,
              id: r.eventId,
              type: r.type,
              body: bodyOf(r.type, r.eventId, r.at),
              example: 0,
              created_at: r.at,
            })),
          )
          .execute();
        await trx
          .insertInto("deliveries")
          .values(
            rows.map((r) => ({
              id: r.deliveryId,
              workspace_id: ws.workspaceId,
              env: ws.env,
              endpoint_id: seed.endpointId,
              event_id: r.eventId,
              status: r.failed ? ("failed" as const) : ("succeeded" as const),
              attempts: 1,
              one_shot: 0,
              next_attempt_at: null,
              last_attempt_at: r.at + 100,
              last_status_code: r.failed ? 500 : 200,
              last_error: r.failed ? "HTTP 500" : null,
              created_at: r.at,
            })),
          )
          .execute();
        await trx
          .insertInto("delivery_attempts")
          .values(
            rows.map((r) => ({
              id: newOrderedId("att", r.at + 100),
              delivery_id: r.deliveryId,
              attempted_at: r.at + 100,
              duration_ms: 40,
              status_code: r.failed ? 500 : 200,
              response_body: r.failed ? "down for maintenance" : "ok",
              error: null,
              manual: 0,
            })),
          )
          .execute();
      }
    });
    progress?.(Math.min(seed.count, start + perTransaction));
  }
}
