// An owner's own sessions, for the dashboard's Sessions page: which are open (browser,
// address, signed in, last seen), and ending any other one or all but this one. A thief
// holding a copied cookie is then shut out by the owner, without the operator; it is
// what the confirmation mail tells an owner to do on a code they did not ask for.
import { recordAction } from "../audit/audit.service.js";
import { SESSION_IDLE_MS, SESSION_MAX_MS } from "../auth/web-session.js";
import type { Services } from "../services.js";
import { endOwnerSessions, listOpenOwnerSessions, type OwnerSessionSummary } from "./owner-session.store.js";
import type { OwnerSessionView } from "./owner-sign-in.service.js";

export interface OwnerSessionListItem extends OwnerSessionSummary {
  current: boolean;
}

/** The owner's sessions still usable (not ended, not idle, not past their end), this one first. */
export async function listOwnerSessions(services: Services, session: OwnerSessionView): Promise<OwnerSessionListItem[]> {
  const now = services.clock.now();
  const open = await listOpenOwnerSessions(services.db, session.actor.ownerId, { seenAfter: now - SESSION_IDLE_MS, openedAfter: now - SESSION_MAX_MS });
  const items = open.map((s) => ({ ...s, current: s.id === session.sessionId }));
  return [...items.filter((s) => s.current), ...items.filter((s) => !s.current)];
}

/**
 * Ends one of the owner's other sessions (`only`), or all of them but this one; answers
 * how many ended. Another owner's session id ends nothing. Audited in the same transaction.
 */
export async function endOtherOwnerSessions(services: Services, session: OwnerSessionView, which: { only: string } | "all"): Promise<number> {
  const now = services.clock.now();
  // This session is never among "others": signing out is the way to end it.
  if (which !== "all" && which.only === session.sessionId) return 0;
  return services.db.transaction().execute(async (trx) => {
    const ended = await endOwnerSessions(trx, session.actor.ownerId, which === "all" ? { except: session.sessionId } : which, now);
    if (ended.length > 0) {
      await recordAction(
        trx,
        session.actor,
        { action: "session.ended", workspaceId: null, env: null, subject: ended.length === 1 ? (ended[0] ?? null) : `${ended.length} sessions` },
        now,
      );
    }
    return ended.length;
  });
}
