import type { FastifyInstance } from "fastify";
import { listAudit } from "../../audit/audit.service.js";
import type { Services } from "../../services.js";
import { ownerFrame } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { auditView } from "./audit.views.js";

export async function auditRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  app.get("/audit", async (request, reply) => {
    const { owner, frame } = await ownerFrame(services, request, "audit");
    const entries = await listAudit(
      services.db,
      owner.session.actor.ownerId,
      frame.workspaces.map((w) => w.id),
    );
    return sendPage(reply, 200, auditView(frame, entries));
  });
}
