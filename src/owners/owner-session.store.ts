import type { Executor } from "../db/database.js";

export interface OwnerSession {
  id: string;
  ownerId: string;
  ownerEmail: string;
  ownerSuspended: boolean;
  createdAt: number;
  lastSeenAt: number;
}

export async function insertOwnerSession(ex: Executor, session: { id: string; ownerId: string; tokenHash: string; now: number }): Promise<void> {
  await ex
    .insertInto("owner_sessions")
    .values({ id: session.id, owner_id: session.ownerId, token_hash: session.tokenHash, created_at: session.now, last_seen_at: session.now, ended_at: null })
    .execute();
}

/** The open session of a token's hash with its owner (suspended or not), or null. */
export async function findOwnerSession(ex: Executor, tokenHash: string): Promise<OwnerSession | null> {
  const row = await ex
    .selectFrom("owner_sessions as s")
    .innerJoin("owners as o", "o.id", "s.owner_id")
    .select(["s.id", "s.owner_id", "o.email", "o.suspended_at", "s.created_at", "s.last_seen_at"])
    .where("s.token_hash", "=", tokenHash)
    .where("s.ended_at", "is", null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    ownerId: row.owner_id,
    ownerEmail: row.email,
    ownerSuspended: row.suspended_at !== null,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
  };
}

export async function touchOwnerSession(ex: Executor, id: string, now: number): Promise<void> {
  await ex.updateTable("owner_sessions").set({ last_seen_at: now }).where("id", "=", id).execute();
}

/** Ends a session; false when it had ended already. */
export async function endOwnerSessionRow(ex: Executor, id: string, now: number): Promise<boolean> {
  const result = await ex.updateTable("owner_sessions").set({ ended_at: now }).where("id", "=", id).where("ended_at", "is", null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
