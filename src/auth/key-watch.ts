// A serving process trusts the API keys it remembers between two reads of the
// auth_version (key.store.ts); this is the read, made once a second by the access watch
// beside the access-change feed (services.ts), so no request asks the database about its
// key while nothing changed. Kept apart from key.service.ts, which needs Services.
import type { Clock } from "../clock.js";
import type { Db } from "../db/database.js";
import type { LimitsService } from "../limits/limits.service.js";
import { authVersionTicket, readAuthVersion, trustAuthVersion } from "./key.store.js";

// How long a read is trusted from its start: two turns of the watch (one a second). A
// watch that falls behind (a database slower than that) stops the trust: each request
// then reads the version again, so a change is never missed for longer than this.
const TRUSTED_MS = 2_000;

/**
 * One turn of a serving process's key watch (run by the access watch, once a second):
 * reads the auth_version and the source addresses blocked for wrong keys, so that keys
 * remembered at that version are answered from memory until the next turn. A failed read
 * stops answering from memory (`forgetAuthVersion`, called by services.ts).
 */
export async function watchKeys(db: Db, limits: LimitsService, clock: Clock): Promise<void> {
  const ticket = authVersionTicket(db);
  const startedAt = clock.now();
  const [version, blocked] = await Promise.all([readAuthVersion(db), limits.readBlockedSources(db, startedAt)]);
  limits.noteBlockedSources(blocked, clock.now(), startedAt + TRUSTED_MS);
  trustAuthVersion(db, version, ticket, startedAt + TRUSTED_MS);
}
