import type { Executor } from "../db/database.js";
import type { Env, WebhookEndpointsTable } from "../db/schema.js";

/** The secret a rotation replaced, sealed, and when it stops signing (migration 019). */
export interface PreviousSecret {
  sealed: string;
  expiresAt: number;
}

export interface Endpoint {
  id: string;
  workspaceId: string;
  env: Env;
  url: string;
  /** null means every event type. */
  eventTypes: string[] | null;
  /** The vendor's note of what it is for; null when none. */
  description: string | null;
  secretSealed: string;
  /** The secret the last rotation replaced and until when it signs (see signingSecrets); null when never rotated. */
  previousSecret: PreviousSecret | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: number | null;
  lastSuccessAt: number | null;
  failingSince: number | null;
  createdAt: number;
}

/**
 * The sealed secrets a delivery attempted at `now` is signed with: the current one, then
 * the previous one while a rotation overlaps (strictly before its expiry; from then on it
 * is never used, whatever is still in the row).
 */
export function signingSecrets(current: string, previous: PreviousSecret | null, now: number): string[] {
  return previous !== null && now < previous.expiresAt ? [current, previous.sealed] : [current];
}

export function previousSecretOf(r: { previous_secret_sealed: string | null; previous_secret_expires_at: number | null }): PreviousSecret | null {
  const { previous_secret_sealed: sealed, previous_secret_expires_at: expiresAt } = r;
  return sealed === null || expiresAt === null ? null : { sealed, expiresAt: Number(expiresAt) };
}

type Row = Omit<WebhookEndpointsTable, "removed_at">;

const num = (v: number | null) => (v === null ? null : Number(v));

function toEndpoint(r: Row): Endpoint {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    env: r.env,
    url: r.url,
    eventTypes: r.event_types === null ? null : (JSON.parse(r.event_types) as string[]),
    description: r.description,
    secretSealed: r.secret_sealed,
    previousSecret: previousSecretOf(r),
    enabled: r.enabled === 1,
    disabledReason: r.disabled_reason,
    disabledAt: num(r.disabled_at),
    lastSuccessAt: num(r.last_success_at),
    failingSince: num(r.failing_since),
    createdAt: Number(r.created_at),
  };
}

const COLUMNS = [
  "id",
  "workspace_id",
  "env",
  "url",
  "event_types",
  "description",
  "secret_sealed",
  "previous_secret_sealed",
  "previous_secret_expires_at",
  "enabled",
  "disabled_reason",
  "disabled_at",
  "last_success_at",
  "failing_since",
  "created_at",
] as const;

export async function insertEndpoint(ex: Executor, endpoint: Endpoint): Promise<void> {
  await ex
    .insertInto("webhook_endpoints")
    .values({
      id: endpoint.id,
      workspace_id: endpoint.workspaceId,
      env: endpoint.env,
      url: endpoint.url,
      event_types: endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
      description: endpoint.description,
      secret_sealed: endpoint.secretSealed,
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      enabled: endpoint.enabled ? 1 : 0,
      disabled_reason: null,
      disabled_at: null,
      last_success_at: null,
      failing_since: null,
      created_at: endpoint.createdAt,
      removed_at: null,
    })
    .execute();
  // The delivery worker's lease on the endpoint: a row to lock from the start (migration 012).
  await ex.insertInto("endpoint_leases").values({ endpoint_id: endpoint.id, locked_until: null, locked_by: null }).execute();
}

/** The workspace environment's endpoints that have not been removed, oldest first. */
export async function listEndpoints(ex: Executor, workspaceId: string, env: Env): Promise<Endpoint[]> {
  const rows = await ex
    .selectFrom("webhook_endpoints")
    .select(COLUMNS)
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("removed_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map(toEndpoint);
}

export async function findEndpoint(ex: Executor, workspaceId: string, env: Env, id: string): Promise<Endpoint | null> {
  const row = await ex
    .selectFrom("webhook_endpoints")
    .select(COLUMNS)
    .where("id", "=", id)
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("removed_at", "is", null)
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

/**
 * Makes `sealed` the endpoint's secret and keeps the current one as the previous until
 * `previousExpiresAt`, in one statement: the row's own values move, so two rotations at
 * once each demote the secret the other made, and neither answers a secret that no longer
 * signs. A previous secret still valid is dropped (the oldest of three goes). False when
 * the endpoint was removed meanwhile.
 */
export async function rotateEndpointSecret(ex: Executor, id: string, sealed: string, previousExpiresAt: number): Promise<boolean> {
  const result = await ex
    .updateTable("webhook_endpoints")
    .set((eb) => ({
      previous_secret_sealed: eb.ref("secret_sealed"),
      previous_secret_expires_at: previousExpiresAt,
      secret_sealed: sealed,
    }))
    .where("id", "=", id)
    .where("removed_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a vendor edits of an endpoint; false when it was removed meanwhile. */
export async function updateEndpointSettings(
  ex: Executor,
  id: string,
  settings: { url: string; eventTypes: string[] | null; description: string | null },
): Promise<boolean> {
  const result = await ex
    .updateTable("webhook_endpoints")
    .set({
      url: settings.url,
      event_types: settings.eventTypes === null ? null : JSON.stringify(settings.eventTypes),
      description: settings.description,
    })
    .where("id", "=", id)
    .where("removed_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removal keeps the row, so the delivery log still names the endpoint. */
export async function markEndpointRemoved(ex: Executor, id: string, now: number): Promise<void> {
  await ex.updateTable("webhook_endpoints").set({ removed_at: now, enabled: 0 }).where("id", "=", id).execute();
}

export async function setEndpointEnabled(ex: Executor, id: string, enabled: boolean, reason: string | null, now: number): Promise<void> {
  if (enabled) {
    // An endpoint enabled again is free for any worker: an attempt still in flight from
    // before it was disabled must not settle a delivery resent since (recordAttempts
    // settles a failure only under the lease it was sent with).
    await ex
      .updateTable("endpoint_leases")
      .set({ locked_until: null, locked_by: null })
      .where("endpoint_id", "=", id)
      .where((eb) => eb.exists(eb.selectFrom("webhook_endpoints").select("id").where("id", "=", id).where("enabled", "=", 0)))
      .execute();
  }
  await ex
    .updateTable("webhook_endpoints")
    .set(enabled ? { enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null } : { enabled: 0, disabled_reason: reason, disabled_at: now })
    .where("id", "=", id)
    .execute();
}

/** Any success clears the endpoint's failing streak (decisions.md). */
/** A success clears the failing streak (the worker writes it at most once a second an endpoint). */
export async function recordEndpointSuccess(ex: Executor, id: string, now: number): Promise<void> {
  await ex.updateTable("webhook_endpoints").set({ last_success_at: now, failing_since: null }).where("id", "=", id).execute();
}

/** Starts the failing streak at the first failure after the last success; answers its start. */
export async function recordEndpointFailure(ex: Executor, id: string, now: number): Promise<number> {
  await ex.updateTable("webhook_endpoints").set({ failing_since: now }).where("id", "=", id).where("failing_since", "is", null).execute();
  const row = await ex.selectFrom("webhook_endpoints").select("failing_since").where("id", "=", id).executeTakeFirstOrThrow();
  return Number(row.failing_since ?? now);
}
