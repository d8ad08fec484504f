// A serving process trusts the API keys it remembers between two reads of the
// auth_version (key.store.ts); this is the read, made once a second by the access watch
// beside the access-change feed (services.ts), so no request asks the database about its
// key while nothing changed. Kept apart from key.service.ts, which needs Services.
import type { Clock } from "../clock.js";
import type { Db } from "../db/database.js";
import type { LimitsService } from "../limits/limits.service.js";
import { authVersionTicket, readAuthVersion, trustAuthVersion } from "./key.store.js";

/**
 * One turn of a serving process's key watch (run by the access watch, once a second):
 * reads the auth_version and the source addresses blocked for wrong keys, so that keys
 * remembered at that version are answered from memory until the next turn. A failed read
 * stops answering from memory (`forgetAuthVersion`, called by services.ts).
 */
export async function watchKeys(db: Db, limits: LimitsService, clock: Clock): Promise<void> {
  const ticket = authVersionTicket(db);
  const [version, blocked] = await Promise.all([readAuthVersion(db), limits.readBlockedSources(db, clock.now())]);
  limits.noteBlockedSources(blocked, clock.now());
  trustAuthVersion(db, version, ticket);
}
