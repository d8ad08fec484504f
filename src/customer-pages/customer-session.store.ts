import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/** An open web session as its token's hash finds it, with its person's address. */
export interface CustomerSession {
  id: string;
  workspaceId: string;
  env: Env;
  personId: string;
  email: string;
  licenceId: string | null;
  /** The device whose page ticket opened or last reached the session, or null. */
  deviceId: string | null;
  createdAt: number;
  lastSeenAt: number;
}

export async function insertCustomerSession(
  ex: Executor,
  session: { id: string; workspaceId: string; env: Env; personId: string; licenceId: string | null; deviceId: string | null; tokenHash: string; now: number },
): Promise<void> {
  await ex
    .insertInto("customer_sessions")
    .values({
      id: session.id,
      workspace_id: session.workspaceId,
      env: session.env,
      person_id: session.personId,
      licence_id: session.licenceId,
      device_id: session.deviceId,
      token_hash: session.tokenHash,
      created_at: session.now,
      last_seen_at: session.now,
      ended_at: null,
    })
    .execute();
}

/** The open session of a token's hash, or null. */
export async function findCustomerSession(ex: Executor, tokenHash: string): Promise<CustomerSession | null> {
  const row = await ex
    .selectFrom("customer_sessions as s")
    .innerJoin("people as p", "p.id", "s.person_id")
    .select(["s.id", "s.workspace_id", "s.env", "s.person_id", "p.email", "s.licence_id", "s.device_id", "s.created_at", "s.last_seen_at"])
    .where("s.token_hash", "=", tokenHash)
    .where("s.ended_at", "is", null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    env: row.env,
    personId: row.person_id,
    email: row.email,
    licenceId: row.licence_id,
    deviceId: row.device_id,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
  };
}

export async function touchCustomerSession(ex: Executor, id: string, now: number): Promise<void> {
  await ex.updateTable("customer_sessions").set({ last_seen_at: now }).where("id", "=", id).execute();
}

/** The device a page ticket of the session's own person came from, for a browser signed in already. */
export async function setCustomerSessionDevice(ex: Executor, id: string, deviceId: string): Promise<void> {
  await ex.updateTable("customer_sessions").set({ device_id: deviceId }).where("id", "=", id).execute();
}

export async function endCustomerSessionRow(ex: Executor, id: string, now: number): Promise<void> {
  await ex.updateTable("customer_sessions").set({ ended_at: now }).where("id", "=", id).where("ended_at", "is", null).execute();
}
