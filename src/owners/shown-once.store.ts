import type { Executor } from "../db/database.js";

export interface ShownOnceRow {
  id: string;
  sessionId: string;
  scope: string;
  contentSealed: string;
  expiresAt: number;
  createdAt: number;
}

/** Keeps the sealed content, and deletes the rows past their expiry (shown or not) as it goes. */
export async function insertShownOnce(ex: Executor, row: ShownOnceRow): Promise<void> {
  await ex.deleteFrom("shown_once").where("expires_at", "<=", row.createdAt).execute();
  await ex
    .insertInto("shown_once")
    .values({
      id: row.id,
      session_id: row.sessionId,
      scope: row.scope,
      content_sealed: row.contentSealed,
      expires_at: row.expiresAt,
      created_at: row.createdAt,
    })
    .execute();
}

/**
 * The sealed content, erased in the same transaction: of two readers at once only one
 * gets it (the second's update finds it erased). Null when it is not this session's and
 * scope's, was shown already, or expired.
 */
export async function takeShownOnceContent(ex: Executor, key: { id: string; sessionId: string; scope: string }, now: number): Promise<string | null> {
  const row = await ex
    .selectFrom("shown_once")
    .select("content_sealed")
    .where("id", "=", key.id)
    .where("session_id", "=", key.sessionId)
    .where("scope", "=", key.scope)
    .where("expires_at", ">", now)
    .where("content_sealed", "is not", null)
    .executeTakeFirst();
  if (!row?.content_sealed) return null;
  const erased = await ex
    .updateTable("shown_once")
    .set({ content_sealed: null })
    .where("id", "=", key.id)
    .where("content_sealed", "is not", null)
    .executeTakeFirst();
  return Number(erased.numUpdatedRows) === 1 ? row.content_sealed : null;
}
