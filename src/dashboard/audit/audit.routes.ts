// The audit log: a workspace environment's, paged and filtered (who, what, which days),
// from the same use case whatever asks; and the account's, every workspace the owner
// owns with their own sign-ins, the newest 200.
import type { FastifyInstance } from "fastify";
import { listAudit, listWorkspaceAudit } from "../../audit/audit.service.js";
import type { Services } from "../../services.js";
import { listWorkspaceOwners } from "../../workspaces/workspace-owners.service.js";
import { ownerFrame, workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { auditView, workspaceAuditView } from "./audit.views.js";

/** The filters, as the GET form sends them. */
const FILTERS = ["owner", "action", "from", "to"] as const;

export async function auditRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  app.get("/audit", async (request, reply) => {
    const { owner, frame } = await ownerFrame(services, request, "account-audit");
    const entries = await listAudit(
      services.db,
      owner.session.actor.ownerId,
      frame.workspaces.map((w) => w.id),
    );
    return sendPage(reply, 200, auditView(frame, entries));
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
      return sendPage(reply, 200, workspaceAuditView(page.frame, { ...result, filters, owners }));
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      // The page again with the refusal tied to its field, and no entries: a filter that
      // could not be read narrows nothing, and showing everything would look like it did.
      return sendPage(reply, 400, workspaceAuditView(page.frame, { data: [], olderCursor: null, newerCursor: null, filters, owners, ...refusal }));
    }
  });
}
