import { sql } from "kysely";
import type { Executor } from "../db/database.js";

/** The deliveries' figures /metrics shows, read from the database at each scrape. */
export interface DeliveryFigures {
  pendingDeliveries: number;
  retryingDeliveries: number;
  failingEndpoints: number;
  disabledEndpoints: number;
}

/**
 * The delivery gauges, read at a scrape across every workspace. Pending deliveries are
 * counted on the `deliveries_due` index (it holds pending ones only), so the cost follows
 * the backlog, not the history; endpoints are few.
 */
export async function readDeliveryFigures(ex: Executor): Promise<DeliveryFigures> {
  const deliveries = await ex
    .selectFrom("deliveries")
    .select((eb) => [eb.fn.countAll<number>().as("pending"), sql<number | null>`sum(case when attempts > 0 then 1 else 0 end)`.as("retrying")])
    .where("status", "=", "pending")
    .executeTakeFirstOrThrow();
  const endpoints = await ex
    .selectFrom("webhook_endpoints")
    .select([
      sql<number | null>`sum(case when enabled = 1 and failing_since is not null then 1 else 0 end)`.as("failing"),
      sql<number | null>`sum(case when enabled = 0 then 1 else 0 end)`.as("disabled"),
    ])
    .where("removed_at", "is", null)
    .executeTakeFirstOrThrow();
  return {
    pendingDeliveries: Number(deliveries.pending),
    retryingDeliveries: Number(deliveries.retrying ?? 0),
    failingEndpoints: Number(endpoints.failing ?? 0),
    disabledEndpoints: Number(endpoints.disabled ?? 0),
  };
}
