import { hash, timingSafeEqual } from "node:crypto";
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Clock } from "../clock.js";
import type { Db, Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import { newId, randomBase62 } from "../ids.js";
import type { LimitsService } from "../limits/limits.service.js";
import type { Services } from "../services.js";
import { findKeyWithOwners, forgetAuthVersion, insertKey, type ListedKey, listKeys, revokeKeyOf } from "./key.store.js";
import type { Principal } from "./principal.js";

const KEY_SHAPE = /^wk_(test|live)_[0-9A-Za-z]{32}$/;

// SHA-256 is enough for keys with 190 random bits (decisions.md): nobody can search
// that space, so a slow password hash would only cost time on every request. The
// one-shot `hash` takes 0.5 µs where a Hash object took 1.4.
function hashKey(key: string): string {
  return hash("sha256", key, "hex");
}

export async function createApiKey(
  ex: Executor,
  clock: Clock,
  input: { workspaceId: string; env: Env; name: string | null },
): Promise<{ id: string; key: string }> {
  const key = `wk_${input.env}_${randomBase62(32)}`;
  const id = newId("key");
  await insertKey(ex, {
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

/** A key in a list: `wk_test_…abcd`, its name, and when it was last used (to the minute). */
export interface KeySummary extends ListedKey {
  lastUsedAt: number | null;
}

/** A workspace's keys (one environment's when given), newest first, with when each was last used. */
export async function listWorkspaceKeys(services: Services, scope: { workspaceId: string; env: Env | null }): Promise<KeySummary[]> {
  const keys = await listKeys(services.db, scope.workspaceId, scope.env);
  const lastUsed = await services.limits.readLastKeyRequests(
    services.db,
    keys.map((k) => k.id),
  );
  return keys.map((key) => ({ ...key, lastUsedAt: lastUsed.get(key.id) ?? null }));
}

/** An owner creates a key of a workspace environment; the key is in this answer only. */
export async function createWorkspaceKey(
  services: Services,
  actor: Actor,
  input: { workspaceId: string; env: Env; name: string },
): Promise<{ id: string; key: string; name: string | null }> {
  const name = input.name.trim();
  if (name.length > 100 || name.includes("\u0000")) throw invalidParameter("name", "A key's name is at most 100 characters.");
  const now = services.clock.now();
  return services.db.transaction().execute(async (trx) => {
    const created = await createApiKey(trx, services.clock, { workspaceId: input.workspaceId, env: input.env, name: name === "" ? null : name });
    await recordAction(trx, actor, { action: "key.created", workspaceId: input.workspaceId, env: input.env, subject: created.id }, now);
    return { ...created, name: name === "" ? null : name };
  });
}

/** An owner revokes a key of a workspace environment: the API refuses it on its next request. */
export async function revokeWorkspaceKey(services: Services, actor: Actor, input: { workspaceId: string; env: Env; keyId: string }): Promise<{ id: string }> {
  const now = services.clock.now();
  const result = await services.db.transaction().execute(async (trx) => {
    const revoked = await revokeKeyOf(trx, input, input.keyId, now);
    if (!revoked) throw notFound(`No API key "${input.keyId}" in this workspace's ${input.env} environment.`);
    // Revoking twice is answered as once, and recorded once.
    if (revoked.revokedAt === now) {
      await recordAction(trx, actor, { action: "key.revoked", workspaceId: input.workspaceId, env: input.env, subject: revoked.id }, now);
    }
    return { id: revoked.id };
  });
  // This process refuses the key from its next request; the others when their watch reads the new auth_version.
  forgetAuthVersion(services.db);
  return result;
}

interface AuthenticateInput {
  authorization: string | undefined;
  /** The workspace slug that the request's Host names, or null when it names none. */
  hostSlug: string | null;
  source: string;
  /** Leave the key's request to be counted with the route's own counters (`keyRequestCounted` false). */
  deferKeyRequest?: boolean;
  /** The request changes something (not GET or HEAD): its key's request is counted by the batcher (limits.service.ts). */
  writes?: boolean;
}

const failed = (message: string) => new ApiError("authentication_failed", message);

/**
 * Resolves the bearer key of a request. In a serving process a key already seen is
 * answered from memory while the key watch finds nothing changed (a revocation or a
 * suspension by any process applies within a second, `watchKeys`); otherwise the key and
 * its owners are read from the database.
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
  const { key: stored, owners, source } = await findKeyWithOwners(db, { hash: keyHash, sourceScope: limits.wrongKeyScope(input.source) }, now);
  // A key answered from memory comes without its address's counter: the address is
  // checked against what the watch read, or read when the watch could not list them all.
  if (source === undefined && limits.knowsBlockedSources(now)) limits.assertSourceKnownNotBlocked(input.source, now);
  else if (source === undefined) await limits.assertSourceNotBlocked(db, input.source, now);
  else limits.assertSourceCountNotBlocked(input.source, source, now);
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
  if (!input.deferKeyRequest) await limits.countKeyRequest(db, stored.id, now, { writes: input.writes === true });

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

/**
 * The workspace a Host names, when it is `<label>.<domain>`; otherwise null (localhost, an
 * IP address, the bare domain). The Host is normalised first (case, and the trailing dot
 * of a fully qualified name: `wsb.example.test.` is the same address as `wsb.example.test`,
 * and once let a key of workspace A read A's data at B's address). A label that is not a
 * slug (`a.b`, `x_y`) still names something under the domain: it matches no workspace, so
 * a key answers 401 there rather than falling back to its own workspace.
 */
export function slugFromHost(hostname: string, domain: string | null): string | null {
  if (domain === null) return null;
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  const suffix = `.${domain}`;
  if (!host.endsWith(suffix)) return null;
  return host.slice(0, -suffix.length);
}
