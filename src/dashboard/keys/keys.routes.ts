// Configure › API keys: list, create (the POST redirects to a page that shows the key
// once: a reload never makes another, nor shows it again), revoke after a confirmation page. Creating or revoking a live key needs a
// fresh mailed code for that key.
import type { FastifyInstance } from "fastify";
import { createWorkspaceKey, listWorkspaceKeys, revokeWorkspaceKey } from "../../auth/key.service.js";
import { ApiError } from "../../errors/errors.js";
import type { Services } from "../../services.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { sectionPath } from "../shared/layout.js";
import { workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { showOnce, takeShown } from "../shared/shown-once.js";
import { confirmLiveKeyView, keyCreatedView, keysPath, keysView, maskedKey, revokeKeyView } from "./keys.views.js";

const fieldError = (error: unknown) => (error instanceof ApiError && error.code === "invalid_parameter" ? error.message : null);

export async function keyRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  app.get("/w/:workspace/:env/keys", async (request, reply) => {
    const page = await workspacePage(services, request, "keys");
    const keys = await listWorkspaceKeys(services, { workspaceId: page.workspace.id, env: page.env });
    const revoked = (request.query as Record<string, string | undefined>).revoked;
    return sendPage(reply, 200, keysView(page.frame, keys, { revoked: revoked !== undefined && keys.some((k) => k.id === revoked) ? revoked : undefined }));
  });

  app.post("/w/:workspace/:env/keys", async (request, reply) => {
    const page = await workspacePage(services, request, "keys");
    const { session } = page.owner;
    const name = formField(request, "name");
    if (
      page.env === "live" &&
      !(await passCodeGate(services, request, reply, session, {
        confirms: { action: `create a live API key in ${page.workspace.name}`, target: [page.workspace.id, page.env, name] },
        page: (error) => confirmLiveKeyView(page.frame, { name, error }),
      }))
    ) {
      return reply;
    }
    try {
      const created = await createWorkspaceKey(services, session.actor, { workspaceId: page.workspace.id, env: page.env, name });
      const shown = await showOnce(services, page, { kind: "key", id: created.id, key: created.key, name: created.name });
      return reply.redirect(`${keysPath(page.frame)}/new/${shown}`, 303);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      const keys = await listWorkspaceKeys(services, { workspaceId: page.workspace.id, env: page.env });
      return sendPage(reply, 400, keysView(page.frame, keys, { error: message, name }));
    }
  });

  app.get("/w/:workspace/:env/keys/new/:shown", async (request, reply) => {
    const page = await workspacePage(services, request, "keys");
    const created = await takeShown(services, page, (request.params as { shown: string }).shown, "key");
    return sendPage(reply, 200, keyCreatedView(page.frame, created));
  });

  app.get("/w/:workspace/:env/keys/:key/revoke", async (request, reply) => {
    const page = await workspacePage(services, request, "keys");
    const { key: keyId } = request.params as { key: string };
    const keys = await listWorkspaceKeys(services, { workspaceId: page.workspace.id, env: page.env });
    const key = keys.find((k) => k.id === keyId && k.revokedAt === null);
    if (!key) throw new PageRefusal(404, "Not found", "No such active key in this workspace environment. It may have been revoked already.");
    return sendPage(reply, 200, revokeKeyView(page.frame, key));
  });

  app.post("/w/:workspace/:env/keys/:key/revoke", async (request, reply) => {
    const page = await workspacePage(services, request, "keys");
    const { key: keyId } = request.params as { key: string };
    if (page.env === "live") {
      // A live key's owner may be a thief's way to stop the real server: revoking one asks too.
      const keys = await listWorkspaceKeys(services, { workspaceId: page.workspace.id, env: page.env });
      const key = keys.find((k) => k.id === keyId && k.revokedAt === null);
      if (!key) throw new PageRefusal(404, "Not found", "No such active key in this workspace environment. It may have been revoked already.");
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: {
          action: `revoke the live API key ${maskedKey(key.env, key.lastFour)} in ${page.workspace.name}`,
          target: [page.workspace.id, page.env, key.id],
        },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Revoke key",
            what: html`Revoking a live key stops whatever uses it at once.`,
            postTo: `${keysPath(page.frame)}/${key.id}/revoke`,
            fields: {},
            submit: "Revoke key",
            cancel: keysPath(page.frame),
            danger: true,
            error,
          }),
      });
      if (!passed) return reply;
    }
    const revoked = await revokeWorkspaceKey(services, page.owner.session.actor, { workspaceId: page.workspace.id, env: page.env, keyId });
    return reply.redirect(`${sectionPath(page.workspace.slug, page.env, "keys")}?revoked=${encodeURIComponent(revoked.id)}`, 303);
  });
}
