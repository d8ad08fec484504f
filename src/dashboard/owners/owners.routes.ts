// Configure › Owners: the workspace's owners and open invitations; invite a co-owner by
// address, withdraw an invitation, remove an owner (never the last) after a
// confirmation. Inviting and removing ask for a fresh code for that address: a stolen
// session must not make its thief a co-owner, nor shut the real owner out. And /dashboard/invitations, where the invitation mail's link lands: a
// signed-out invitee signs in (which accepts), a signed-in one accepts there. The use
// cases are those of `warden admin owner invite|withdraw|remove`.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normaliseEmail } from "../../customers/email.js";
import type { Services } from "../../services.js";
import { listOwnedWorkspaces } from "../../workspaces/workspace.service.js";
import {
  acceptInvitations,
  checkOwnerInvitation,
  inviteOwner,
  listInvitationsOf,
  listWorkspaceOwners,
  removeOwner,
  withdrawInvitation,
} from "../../workspaces/workspace-owners.service.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { DASHBOARD, sectionPath } from "../shared/layout.js";
import { signedInOf, type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldError, sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { invitationsView, ownersPath, ownersView, removeOwnerView } from "./owners.views.js";

export async function ownerRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/owners";

  const render = async (page: WorkspacePage, extra: { flash?: Record<string, string | undefined>; form?: { email?: string; error?: string } } = {}) => {
    const { owners, invitations } = await listWorkspaceOwners(services, { workspace: page.workspace.slug });
    return ownersView(page.frame, { owners, invitations, ...extra });
  };
  const query = (request: FastifyRequest) => request.query as Record<string, string | undefined>;

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "owners");
    const { invited, removed, withdrawn } = query(request);
    return sendPage(reply, 200, await render(page, { flash: { invited, removed, withdrawn } }));
  });

  app.post(`${base}/invite`, async (request, reply) => {
    const page = await workspacePage(services, request, "owners");
    const email = formField(request, "email");
    try {
      // A mistyped address, or an owner already, is told at once, before a code is mailed.
      await checkOwnerInvitation(services, { workspace: page.workspace.slug, email }, page.owner.session.actor);
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `invite ${email.trim()} to co-own ${page.workspace.name}`, target: [page.workspace.id, normaliseEmail(email)] },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Invite owner",
            what: html`A co-owner of ${page.workspace.name} can do everything you can, remove you included; you are inviting <strong>${email}</strong>.`,
            postTo: `${ownersPath(page.frame)}/invite`,
            fields: { email },
            submit: "Send invitation",
            cancel: ownersPath(page.frame),
            error,
          }),
      });
      if (!passed) return reply;
      // The link in the mail is the configured public origin: a request's Host is its sender's to write.
      const invitation = await inviteOwner(services, { workspace: page.workspace.slug, email, baseUrl: services.config.publicUrl }, page.owner.session.actor);
      return reply.redirect(`${ownersPath(page.frame)}?invited=${encodeURIComponent(invitation.email)}`, 303);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, await render(page, { form: { email, error: message } }));
    }
  });

  app.post(`${base}/withdraw`, async (request, reply) => {
    const page = await workspacePage(services, request, "owners");
    const email = formField(request, "email");
    await withdrawInvitation(services, { workspace: page.workspace.slug, email }, page.owner.session.actor);
    return reply.redirect(`${ownersPath(page.frame)}?withdrawn=${encodeURIComponent(email)}`, 303);
  });

  app.get(`${base}/remove`, async (request, reply) => {
    const page = await workspacePage(services, request, "owners");
    const email = query(request).email ?? "";
    const { owners } = await listWorkspaceOwners(services, { workspace: page.workspace.slug });
    const owner = owners.find((o) => o.email === email);
    if (!owner) throw new PageRefusal(404, "Not found", "No such owner of this workspace. They may have been removed already.");
    if (owners.length === 1) return reply.redirect(ownersPath(page.frame), 303);
    return sendPage(reply, 200, removeOwnerView(page.frame, owner.email));
  });

  app.post(`${base}/remove`, async (request, reply) => {
    const page = await workspacePage(services, request, "owners");
    const email = formField(request, "email");
    try {
      const self = normaliseEmail(email) === normaliseEmail(page.owner.session.actor.email);
      // Only a removal that would happen asks for a code: no such owner, or the last one, is refused at once.
      const { owners } = await listWorkspaceOwners(services, { workspace: page.workspace.slug });
      const removable = owners.length > 1 && owners.some((o) => normaliseEmail(o.email) === normaliseEmail(email));
      const passed =
        !removable ||
        (await passCodeGate(services, request, reply, page.owner.session, {
          confirms: { action: `remove ${email.trim()} from the owners of ${page.workspace.name}`, target: [page.workspace.id, normaliseEmail(email)] },
          page: (error) =>
            confirmCodeView(page.frame, {
              title: "Remove owner",
              what: self ? html`You are leaving ${page.workspace.name}.` : html`<strong>${email}</strong> can no longer open ${page.workspace.name}.`,
              postTo: `${ownersPath(page.frame)}/remove`,
              fields: { email },
              submit: self ? "Leave workspace" : "Remove owner",
              cancel: ownersPath(page.frame),
              danger: true,
              error,
            }),
        }));
      if (!passed) return reply;
      const removed = await removeOwner(services, { workspace: page.workspace.slug, email }, page.owner.session.actor);
      // Having left, the owner has no page of this workspace to go back to.
      if (removed.email === page.owner.session.actor.email) return reply.redirect(DASHBOARD, 303);
      return reply.redirect(`${ownersPath(page.frame)}?removed=${encodeURIComponent(removed.email)}`, 303);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, await render(page, { form: { error: message } }));
    }
  });

  app.get("/invitations", async (request, reply) => {
    const { session, csrf } = signedInOf(request);
    const invitations = await listInvitationsOf(services, session.actor);
    return sendPage(reply, 200, invitationsView({ csrf, email: session.actor.email, invitations }));
  });

  app.post("/invitations", async (request, reply) => {
    const { session } = signedInOf(request);
    const [joined] = await acceptInvitations(services, session.actor);
    // Straight to the workspace just joined (the first one, if several).
    const workspace = joined === undefined ? undefined : (await listOwnedWorkspaces(services.db, session.actor.ownerId)).find((w) => w.id === joined);
    return reply.redirect(workspace ? sectionPath(workspace.slug, "test", "overview") : DASHBOARD, 303);
  });
}
