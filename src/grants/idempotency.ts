// Idempotency-Key for requests that write (a grant, a spend): the key is claimed in the
// request's own transaction, so a failed request leaves no claim behind, and a repeat
// within the window answers what the first answered.
import { DAY_MS } from "../clock.js";
import type { Executor } from "../db/database.js";
import { ApiError } from "../errors/errors.js";
import { claimIdempotencyKey, claimIdempotencyKeys, type IdempotencyScope, type KeyClaim } from "./idempotency.store.js";

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
  if (earlier.requestHash !== requestHash) throw mismatch();
  return JSON.parse(earlier.responseBody) as Answer;
}

function mismatch(): ApiError {
  return new ApiError("idempotency_mismatch", "This Idempotency-Key was used with a different request in the last 24 hours.", { param: "Idempotency-Key" });
}

/**
 * What claimOrReplay came to for one request of a batch. A replay is the first answer's
 * JSON as it was stored: it is answered as it is, not parsed and written out again.
 */
export type Claimed = { claimed: true } | { claimed: false; responseBody: string } | { claimed: false; error: ApiError };

/** claimOrReplay for a batch of requests with distinct keys, by key. */
export async function claimOrReplayMany(
  trx: Executor,
  scope: Omit<IdempotencyScope, "key">,
  claims: readonly KeyClaim[],
  now: number,
): Promise<Map<string, Claimed>> {
  const records = await claimIdempotencyKeys(trx, scope, claims, now, now - IDEMPOTENCY_WINDOW_MS);
  const outcomes = new Map<string, Claimed>();
  for (const { key, requestHash } of claims) {
    const earlier = records.get(key);
    if (earlier === undefined) throw new Error(`Idempotency-Key ${key} was neither claimed nor found`);
    if (earlier === "claimed") outcomes.set(key, { claimed: true });
    else if (earlier.requestHash !== requestHash) outcomes.set(key, { claimed: false, error: mismatch() });
    else {
      // Parsed only to check it: a stored answer that is not JSON fails its own request
      // (never reaches a client as a 200); a sound one is answered as it was stored.
      JSON.parse(earlier.responseBody);
      outcomes.set(key, { claimed: false, responseBody: earlier.responseBody });
    }
  }
  return outcomes;
}
