// The audit log: a workspace environment's, paged and filtered (who, what, which days),
// from the same use case whatever asks; and the account's, every workspace the owner
// owns with their own sign-ins, the newest 200.
import type { FastifyInstance } from "fastify";
import { type AuditEntry, listAudit, listWorkspaceAudit } from "../../audit/audit.service.js";
import { listWorkspaceKeys } from "../../auth/key.service.js";
import { customersOfSources } from "../../customers/customer.service.js";
import type { Services } from "../../services.js";
import { eventTypesOf, listEndpoints } from "../../webhooks/webhook.service.js";
import { listBundles, listTools } from "../../workspaces/workspace.service.js";
import { listWorkspaceOwners } from "../../workspaces/workspace-owners.service.js";
import { accountFrame, contextOf, type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { auditView, entryPlace, workspaceAuditView } from "./audit.views.js";

/**
 * What the entries' subjects are called, where they have a name (names before ids): a key
 * by its name, an endpoint by its description or URL, an event by its type, a tool or a
 * bundle by its name, a licence, subscription or grant by its customer's address; asked of
 * the use cases that list them, only for the kinds on the page. A subject deleted since
 * (an endpoint), or of another kind, keeps its id alone.
 */
async function subjectNames(services: Services, page: WorkspacePage, entries: readonly AuditEntry[]): Promise<Map<string, string>> {
  const of = (prefix: string) => entries.filter((e) => e.subject !== null && e.action.startsWith(prefix)).map((e) => e.subject as string);
  const [keys, endpoints, events, tools, bundles] = [of("key."), of("endpoint."), of("event."), of("tool."), of("bundle.")];
  const sources = { licences: of("licence."), subscriptions: of("subscription."), grants: of("grant.") };
  const ctx = endpoints.length + events.length > 0 ? await contextOf(services, page) : null;
  const named: [string, string][][] = await Promise.all([
    keys.length === 0
      ? []
      : listWorkspaceKeys(services, { workspaceId: page.workspace.id, env: page.env }).then((all) =>
          all.flatMap((k): [string, string][] => (k.name === null ? [] : [[k.id, k.name]])),
        ),
    ctx === null || endpoints.length === 0 ? [] : listEndpoints(ctx).then(({ data }) => data.map((e): [string, string] => [e.id, e.description ?? e.url])),
    ctx === null || events.length === 0 ? [] : eventTypesOf(ctx, events).then((types) => [...types]),
    tools.length === 0 ? [] : listTools(services.db, { workspace: page.workspace.slug }).then((all) => all.map((t): [string, string] => [t.id, t.name])),
    bundles.length === 0 ? [] : listBundles(services.db, { workspace: page.workspace.slug }).then((all) => all.map((b): [string, string] => [b.id, b.name])),
    customersOfSources(services, { workspaceId: page.workspace.id, env: page.env }, sources).then((all) => [...all]),
  ]);
  return new Map(named.flat());
}

/**
 * The customers the account's log's entries about a licence, subscription or grant touched,
 * by `entryPlace`: asked of each workspace environment on the page (the owner's own, as the
 * log lists only those), so an id names its customer there only.
 */
async function accountSubjectNames(services: Services, entries: readonly AuditEntry[]): Promise<Map<string, string>> {
  const places = new Map<string, { workspaceId: string; env: NonNullable<AuditEntry["env"]>; entries: AuditEntry[] }>();
  for (const e of entries) {
    if (e.workspaceId === null || e.env === null || e.subject === null) continue;
    const key = `${e.workspaceId}/${e.env}`;
    const place = places.get(key) ?? { workspaceId: e.workspaceId, env: e.env, entries: [] };
    place.entries.push(e);
    places.set(key, place);
  }
  const named = await Promise.all(
    [...places.values()].map(async (place) => {
      const of = (prefix: string) => place.entries.filter((e) => e.action.startsWith(prefix)).map((e) => e.subject as string);
      const found = await customersOfSources(services, place, { licences: of("licence."), subscriptions: of("subscription."), grants: of("grant.") });
      return [...found].map(([id, email]): [string, string] => [entryPlace(place, id), email]);
    }),
  );
  return new Map(named.flat());
}

/** The filters, as the GET form sends them. */
const FILTERS = ["owner", "action", "from", "to"] as const;

export async function auditRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  app.get("/audit", async (request, reply) => {
    const { owner, frame } = await accountFrame(services, request, "account-audit");
    const entries = await listAudit(
      services.db,
      owner.session.actor.ownerId,
      frame.workspaces.map((w) => w.id),
    );
    return sendPage(reply, 200, auditView(frame, entries, await accountSubjectNames(services, entries)));
  });

  app.get("/w/:workspace/:env/audit", async (request, reply) => {
    const page = await workspacePage(services, request, "audit");
    const query = request.query as Record<string, string | string[] | undefined>;
    // A repeated parameter is read as its first value: the form never sends two.
    const one = (name: string) => {
      const value = query[name];
      return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
    };
    const filters = Object.fromEntries(FILTERS.map((name) => [name, one(name)])) as Record<(typeof FILTERS)[number], string>;
    const { owners } = await listWorkspaceOwners(services, { workspace: page.workspace.slug });
    const scope = { workspace: page.workspace.slug, env: page.env };
    try {
      const result = await listWorkspaceAudit(services, { ...scope, ...filters, older: one("older"), newer: one("newer") });
      const names = await subjectNames(services, page, result.data);
      return sendPage(reply, 200, workspaceAuditView(page.frame, { ...result, filters, owners, names }));
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      // The page again with the refusal tied to its field, and no entries: a filter that
      // could not be read narrows nothing, and showing everything would look like it did.
      return sendPage(
        reply,
        400,
        workspaceAuditView(page.frame, { data: [], olderCursor: null, newerCursor: null, filters, owners, names: new Map(), ...refusal }),
      );
    }
  });
}
