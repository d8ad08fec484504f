// A secret the dashboard shows once (a new API key, a new or rotated signing secret)
// reaches its page through a redirect: the POST that made it seals it here for the
// owner's session and redirects to a page that takes it, so a reload of that page never
// makes another key and shows nothing a second time, and the secret is never in a URL
// (only the row's random id is) nor in a log. Sealed under WARDEN_SECRET_KEY like every
// secret at rest; erased when shown; SHOWN_ONCE_MS after it was made it is gone anyway.
import { MINUTE_MS } from "../clock.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { insertShownOnce, takeShownOnceContent } from "./shown-once.store.js";

/** Long enough for a slow redirect or a mail code round trip, short enough that an abandoned one does not linger. */
const SHOWN_ONCE_MS = 10 * MINUTE_MS;

/** Where it may be shown: the session that made it, on a page of one workspace environment. */
export interface ShownOnceKey {
  sessionId: string;
  scope: string;
}

/** Seals `content` for one showing; answers the id its page's address carries. */
export async function keepToShowOnce(services: Pick<Services, "db" | "clock" | "secretBox">, key: ShownOnceKey, content: unknown): Promise<string> {
  const id = `once_${randomBase62(32)}`;
  const now = services.clock.now();
  await insertShownOnce(services.db, {
    id,
    ...key,
    contentSealed: services.secretBox.seal(JSON.stringify(content)),
    expiresAt: now + SHOWN_ONCE_MS,
    createdAt: now,
  });
  return id;
}

/** The content kept under `id` for this session and scope, once: null ever after, and for anyone else. */
export async function takeShownOnce(services: Pick<Services, "db" | "clock" | "secretBox">, key: ShownOnceKey, id: string): Promise<unknown | null> {
  const sealed = await services.db.transaction().execute((trx) => takeShownOnceContent(trx, { id, ...key }, services.clock.now()));
  return sealed === null ? null : (JSON.parse(services.secretBox.open(sealed)) as unknown);
}
