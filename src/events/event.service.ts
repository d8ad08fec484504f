import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { insertDeliveries } from "../webhooks/delivery.store.js";
import { listEndpoints } from "../webhooks/endpoint.store.js";
import { insertEventOnce } from "./event.store.js";
import { type EventType, serializeEvent } from "./event-types.js";

export interface NewEvent {
  workspaceId: string;
  env: Env;
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: number;
  example?: boolean;
  /** Whom it is about (the customer the dashboard names and filters by); none for an example. */
  personId?: string | null;
  /** Deliver only to these endpoints (a test event); otherwise to every enabled endpoint that takes the type. */
  endpointIds?: readonly string[];
}

/**
 * Writes an event and its deliveries in the caller's transaction: the transactional
 * outbox. The caller's state change and the event commit together or not at all, and
 * the worker finds the deliveries in the table. An event whose id exists already (the
 * same fact reported again) writes nothing: answers false.
 */
export async function emitEvent(trx: Executor, event: NewEvent): Promise<boolean> {
  const body = serializeEvent({
    id: event.id,
    type: event.type,
    created: Math.floor(event.createdAt / 1000),
    livemode: event.env === "live",
    data: event.data,
  });
  const written = await insertEventOnce(trx, {
    workspaceId: event.workspaceId,
    env: event.env,
    id: event.id,
    type: event.type,
    body,
    example: event.example ?? false,
    createdAt: event.createdAt,
    personId: event.personId ?? null,
  });
  if (!written) return false;
  const endpointIds =
    event.endpointIds ??
    (await listEndpoints(trx, event.workspaceId, event.env))
      .filter((e) => e.enabled && (e.eventTypes === null || e.eventTypes.includes(event.type)))
      .map((e) => e.id);
  await insertDeliveries(trx, event, endpointIds, event.createdAt);
  return true;
}
