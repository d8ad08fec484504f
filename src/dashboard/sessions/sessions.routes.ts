// Account › Sessions: the owner's open sessions, and ending any other one or all but this
// one. No fresh code: ending sessions opens no way in, and it is how an owner shuts out
// a copied cookie (a thief ending the owner's session only makes them sign in again by
// mail, and then end the thief's).
import type { FastifyInstance } from "fastify";
import { endOtherOwnerSessions, listOwnerSessions } from "../../owners/owner-sessions.service.js";
import type { Services } from "../../services.js";
import { accountQuery } from "../shared/layout.js";
import { accountFrame } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { PageRefusal } from "../shared/security.js";
import { SESSIONS_PATH, sessionsView } from "./sessions.views.js";

export async function sessionRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  app.get("/sessions", async (request, reply) => {
    const { owner, frame } = await accountFrame(services, request, "sessions");
    const ended = Number.parseInt((request.query as Record<string, string | undefined>).ended ?? "", 10);
    const sessions = await listOwnerSessions(services, owner.session);
    return sendPage(reply, 200, sessionsView(frame, sessions, { ended: Number.isSafeInteger(ended) && ended >= 0 ? ended : undefined }));
  });

  app.post("/sessions/:session/end", async (request, reply) => {
    const { owner, frame } = await accountFrame(services, request, "sessions");
    const { session } = request.params as { session: string };
    const ended = await endOtherOwnerSessions(services, owner.session, { only: session });
    // Another owner's session, this one, or one ended already: all alike, nothing to end here.
    if (ended === 0) throw new PageRefusal(404, "Not found", "No such session of yours still open. It may have ended already.");
    return reply.redirect(`${SESSIONS_PATH}${accountQuery(frame.current, { ended: String(ended) })}`, 303);
  });

  app.post("/sessions/end-others", async (request, reply) => {
    const { owner, frame } = await accountFrame(services, request, "sessions");
    const ended = await endOtherOwnerSessions(services, owner.session, "all");
    return reply.redirect(`${SESSIONS_PATH}${accountQuery(frame.current, { ended: String(ended) })}`, 303);
  });
}
