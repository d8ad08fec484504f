// The secrets a page shows once, after the redirect from the POST that made them
// (owners/shown-once.service.ts): what each kind carries, kept for the signed-in
// session and the workspace environment on screen.
import { keepToShowOnce, takeShownOnce } from "../../owners/shown-once.service.js";
import type { Services } from "../../services.js";
import type { WorkspacePage } from "./owner-context.js";
import { PageRefusal } from "./security.js";

export type ShownSecret =
  | { kind: "key"; id: string; key: string; name: string | null }
  | { kind: "endpoint-added"; endpoint: string; secret: string }
  | { kind: "secret-rotated"; endpoint: string; secret: string; previousExpiresAt: string };

// The kind is part of the scope: another kind's page finds nothing, and so erases nothing.
const keyOf = (page: WorkspacePage, kind: ShownSecret["kind"]) => ({
  sessionId: page.owner.session.sessionId,
  scope: `${page.workspace.id}:${page.env}:${kind}`,
});

/** Seals the secret for its one page; answers the id that page's address carries. */
export function showOnce(services: Services, page: WorkspacePage, secret: ShownSecret): Promise<string> {
  return keepToShowOnce(services, keyOf(page, secret.kind), secret);
}

/** The secret kept under `id`, once; afterwards (or for another session) a page that says it was shown. */
export async function takeShown<K extends ShownSecret["kind"]>(
  services: Services,
  page: WorkspacePage,
  id: string,
  kind: K,
): Promise<Extract<ShownSecret, { kind: K }>> {
  const shown = (await takeShownOnce(services, keyOf(page, kind), id)) as ShownSecret | null;
  if (shown === null || shown.kind !== kind) {
    throw new PageRefusal(
      404,
      "Already shown",
      "This secret was shown once and is gone: Warden does not show it again. If you did not store it, make a new one (revoke a key and create another, or rotate the endpoint's secret).",
    );
  }
  return shown as Extract<ShownSecret, { kind: K }>;
}
