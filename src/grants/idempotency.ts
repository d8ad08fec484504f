// Idempotency-Key for requests that write (a grant, a spend): the key is claimed in the
// request's own transaction, so a failed request leaves no claim behind, and a repeat
// within the window answers what the first answered.
import { DAY_MS } from "../clock.js";
import type { Executor } from "../db/database.js";
import { ApiError } from "../errors/errors.js";
import { claimIdempotencyKey, type IdempotencyScope } from "./idempotency.store.js";

/** How long a key's first answer is kept and replayed (retention deletes it after). */
export const IDEMPOTENCY_WINDOW_MS = DAY_MS;

/**
 * Claims the key for the request hashed `requestHash`, in `trx`: null when claimed (the
 * caller writes, then completes the key with its answer), or the earlier answer to
 * replay. The same key with another request within the window is refused.
 */
export async function claimOrReplay<Answer>(trx: Executor, scope: IdempotencyScope, requestHash: string, now: number): Promise<Answer | null> {
  const earlier = await claimIdempotencyKey(trx, scope, requestHash, now, now - IDEMPOTENCY_WINDOW_MS);
  if (earlier === "claimed") return null;
  if (earlier.requestHash !== requestHash) {
    throw new ApiError("idempotency_mismatch", "This Idempotency-Key was used with a different request in the last 24 hours.", { param: "Idempotency-Key" });
  }
  return JSON.parse(earlier.responseBody) as Answer;
}
