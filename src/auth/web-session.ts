// How long a browser's session lasts, alike for owners in the dashboard and for customers
// on the hosted pages: idle 12 hours, 7 days at most, ended by signing out. Its last-seen
// time is written at most once a minute: a commit on every page view would buy nothing.

/** A session not seen for this long has ended. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** A session ends this long after sign-in, however busy. */
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
const TOUCH_EVERY_MS = 60_000;

interface SeenSession {
  createdAt: number;
  lastSeenAt: number;
}

/** Whether the session has ended by idleness or age at `now`. */
export const sessionOver = (session: SeenSession, now: number) => now - session.lastSeenAt >= SESSION_IDLE_MS || now - session.createdAt >= SESSION_MAX_MS;

/** Whether seeing the session now should write its last-seen time. */
export const touchDue = (session: SeenSession, now: number) => now - session.lastSeenAt >= TOUCH_EVERY_MS;
