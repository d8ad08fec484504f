import { hash, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ApiError } from "../errors/errors.js";
import { newId, randomBase62 } from "../ids.js";
import type { LimitsService } from "../limits/limits.service.js";
import type { ServicePlan } from "../workspaces/workspace.types.js";
import { findKeyWithOwners, insertKey } from "./key.store.js";

const KEY_SHAPE = /^wk_(test|live)_[0-9A-Za-z]{32}$/;

/** What an authenticated request acts as: one workspace in one environment. */
export interface Principal {
  keyId: string;
  workspaceId: string;
  workspaceSlug: string;
  plan: ServicePlan;
  env: Env;
  ownerIds: string[];
  /**
   * Whether this request has been counted against the key's requests per minute. A route
   * that counts lookups counts the key's request in the same statement (one round trip
   * less); until it does, this is false.
   */
  keyRequestCounted: boolean;
}

// SHA-256 is enough for keys with 190 random bits (decisions.md): nobody can search
// that space, so a slow password hash would only cost time on every request. The
// one-shot `hash` takes 0.5 µs where a Hash object took 1.4.
function hashKey(key: string): string {
  return hash("sha256", key, "hex");
}

export async function createApiKey(db: Db, clock: Clock, input: { workspaceId: string; env: Env; name: string | null }): Promise<{ id: string; key: string }> {
  const key = `wk_${input.env}_${randomBase62(32)}`;
  const id = newId("key");
  await insertKey(db, {
    id,
    workspaceId: input.workspaceId,
    env: input.env,
    name: input.name,
    hash: hashKey(key),
    lastFour: key.slice(-4),
    createdAt: clock.now(),
  });
  return { id, key };
}

interface AuthenticateInput {
  authorization: string | undefined;
  /** The workspace slug that the request's Host names, or null when it names none. */
  hostSlug: string | null;
  source: string;
  /** Leave the key's request to be counted with the route's own counters (`keyRequestCounted` false). */
  deferKeyRequest?: boolean;
}

const failed = (message: string) => new ApiError("authentication_failed", message);

/**
 * Resolves the bearer key of a request. Every call reads the key and its owners from
 * the database, so a revocation or suspension by any process applies to the next request.
 */
export async function authenticate(db: Db, clock: Clock, limits: LimitsService, input: AuthenticateInput): Promise<Principal> {
  const now = clock.now();
  const wrongKey = async (message: string): Promise<never> => {
    throw (await limits.countWrongKey(db, input.source, now)) ?? failed(message);
  };

  // The auth scheme is case-insensitive in HTTP (RFC 9110 §11.1); the key itself is not.
  const header = input.authorization;
  const presented = header === undefined ? undefined : /^Bearer (\S+)$/i.exec(header)?.[1];
  if (presented === undefined || !KEY_SHAPE.test(presented)) {
    await limits.assertSourceNotBlocked(db, input.source, now);
    if (header === undefined || header.trim() === "") throw failed("No API key. Send the header Authorization: Bearer <API_KEY>.");
    return wrongKey("Malformed API key. Keys look like wk_test_… or wk_live_… followed by 32 letters and digits.");
  }
  const keyHash = hashKey(presented);
  // One round trip: the key, its owners, and the source address's wrong-key count.
  const { key: stored, owners, source } = await findKeyWithOwners(db, { hash: keyHash, sourceScope: limits.wrongKeyScope(input.source) });
  limits.assertSourceCountNotBlocked(source, now);
  // The row was found by its hash; comparing the hashes again in constant time keeps
  // the final decision free of timing differences whatever the index lookup does.
  if (!stored || !timingSafeEqual(Buffer.from(stored.hash, "hex"), Buffer.from(keyHash, "hex"))) {
    return wrongKey("Invalid API key.");
  }
  if (stored.revokedAt !== null) return wrongKey("This API key has been revoked.");

  if (owners.some((owner) => owner.suspended)) {
    throw failed("This API key's workspace is suspended.");
  }
  if (input.hostSlug !== null && input.hostSlug !== stored.workspaceSlug) {
    throw failed("This API key does not belong to the workspace at this address.");
  }
  if (!input.deferKeyRequest) await limits.countKeyRequest(db, stored.id, now);

  return {
    keyId: stored.id,
    workspaceId: stored.workspaceId,
    workspaceSlug: stored.workspaceSlug,
    plan: stored.workspacePlan,
    env: stored.env,
    ownerIds: owners.map((owner) => owner.id),
    keyRequestCounted: !input.deferKeyRequest,
  };
}

/** The workspace slug named by a Host, when it is `<slug>.<domain>`; otherwise null. */
export function slugFromHost(hostname: string, domain: string | null): string | null {
  if (domain === null) return null;
  const host = hostname.toLowerCase();
  const suffix = `.${domain}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return /^[a-z0-9-]+$/.test(label) ? label : null;
}
