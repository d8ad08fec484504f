import type { Executor } from "../db/database.js";

export interface OwnerSession {
  id: string;
  ownerId: string;
  ownerEmail: string;
  ownerSuspended: boolean;
  createdAt: number;
  lastSeenAt: number;
  address: string | null;
}

/** An open session as the owner's sessions page lists it. */
export interface OwnerSessionSummary {
  id: string;
  userAgent: string | null;
  address: string | null;
  createdAt: number;
  lastSeenAt: number;
}

export async function insertOwnerSession(
  ex: Executor,
  session: { id: string; ownerId: string; tokenHash: string; now: number; userAgent: string | null; address: string | null },
): Promise<void> {
  await ex
    .insertInto("owner_sessions")
    .values({
      id: session.id,
      owner_id: session.ownerId,
      token_hash: session.tokenHash,
      created_at: session.now,
      last_seen_at: session.now,
      ended_at: null,
      user_agent: session.userAgent,
      address: session.address,
    })
    .execute();
}

/** The open session of a token's hash with its owner (suspended or not), or null. */
export async function findOwnerSession(ex: Executor, tokenHash: string): Promise<OwnerSession | null> {
  const row = await ex
    .selectFrom("owner_sessions as s")
    .innerJoin("owners as o", "o.id", "s.owner_id")
    .select(["s.id", "s.owner_id", "o.email", "o.suspended_at", "s.created_at", "s.last_seen_at", "s.address"])
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
    address: row.address,
  };
}

export async function touchOwnerSession(ex: Executor, id: string, now: number, address: string | null): Promise<void> {
  await ex.updateTable("owner_sessions").set({ last_seen_at: now, address }).where("id", "=", id).execute();
}

/** Ends a session; false when it had ended already. */
export async function endOwnerSessionRow(ex: Executor, id: string, now: number): Promise<boolean> {
  const result = await ex.updateTable("owner_sessions").set({ ended_at: now }).where("id", "=", id).where("ended_at", "is", null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** An owner's sessions not yet ended that were seen after `seenAfter` and opened after `openedAfter`, newest first. */
export async function listOpenOwnerSessions(ex: Executor, ownerId: string, bounds: { seenAfter: number; openedAfter: number }): Promise<OwnerSessionSummary[]> {
  const rows = await ex
    .selectFrom("owner_sessions")
    .select(["id", "user_agent", "address", "created_at", "last_seen_at"])
    .where("owner_id", "=", ownerId)
    .where("ended_at", "is", null)
    .where("last_seen_at", ">", bounds.seenAfter)
    .where("created_at", ">", bounds.openedAfter)
    .orderBy("last_seen_at", "desc")
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    userAgent: row.user_agent,
    address: row.address,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
  }));
}

/** Ends an owner's open sessions: the one named, or (`except`) all but that one. The ids ended. */
export async function endOwnerSessions(ex: Executor, ownerId: string, which: { only: string } | { except: string }, now: number): Promise<string[]> {
  let query = ex.updateTable("owner_sessions").set({ ended_at: now }).where("owner_id", "=", ownerId).where("ended_at", "is", null);
  query = "only" in which ? query.where("id", "=", which.only) : query.where("id", "<>", which.except);
  const rows = await query.returning("id").execute();
  return rows.map((row) => row.id);
}
