// `warden admin owner …` and `login-link`: the operator's side of owners (list, create,
// suspend, invite, remove), the one-time dashboard link, and the signing keys' commands.

import { type Command, optStr, str } from "./command.js";
import { dashboardBaseUrl, loginLinkCommand } from "./login-link.command.js";
import { signingKeyCommands } from "./signing-key.commands.js";
import { formatTable, isoOrNull, listText, minute } from "./table.js";

export const ownerCommands: Record<string, Command> = {
  "admin owner list": {
    summary: "List owners, with the workspaces each holds.",
    usage: "warden admin owner list",
    options: {},
    async run({ services }) {
      const { listOwners } = await import("../workspaces/workspace.service.js");
      const owners = await listOwners((await services()).db);
      return {
        json: owners.map((o) => ({
          id: o.id,
          email: o.email,
          suspended_at: isoOrNull(o.suspendedAt),
          workspaces: o.workspaces,
          created_at: isoOrNull(o.createdAt),
        })),
        text: listText(
          "No owners.",
          ["ID", "EMAIL", "SUSPENDED", "CREATED", "WORKSPACES"],
          owners.map((o) => [o.id, o.email, o.suspendedAt === null ? "no" : minute(o.suspendedAt), minute(o.createdAt), o.workspaces.join(",") || "-"]),
        ),
      };
    },
  },
  "admin owner create": {
    summary: "Create an owner: the person who holds workspaces and whose quotas they count against.",
    usage: "warden admin owner create --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { createOwner } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const owner = await createOwner(db, clock, { email: str(v, "email") });
      return { json: { id: owner.id, email: owner.email }, text: `Created owner ${owner.email} (${owner.id}).` };
    },
  },
  "admin owner suspend": {
    summary: "Suspend an owner: every key of their workspaces answers 401 until lifted.",
    usage: "warden admin owner suspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { setOwnerSuspension } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: true });
      return { json: { id: owner.id, email: owner.email, suspended: true }, text: `Suspended ${owner.email}: every key of their workspaces now answers 401.` };
    },
  },
  "admin owner unsuspend": {
    summary: "Lift an owner's suspension.",
    usage: "warden admin owner unsuspend --email E",
    options: { email: { type: "string" } },
    required: ["email"],
    async run({ values: v, services }) {
      const { setOwnerSuspension } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const owner = await setOwnerSuspension(db, clock, { email: str(v, "email"), suspended: false });
      return { json: { id: owner.id, email: owner.email, suspended: false }, text: `Lifted the suspension of ${owner.email}.` };
    },
  },
  "admin login-link": loginLinkCommand,
  ...signingKeyCommands,
  "admin owner invite": {
    summary: "Invite an address to co-own a workspace: it accepts by signing in to the dashboard within 7 days.",
    usage: "warden admin owner invite --workspace S --email E [--base-url https://warden.example.com]",
    options: { workspace: { type: "string" }, email: { type: "string" }, "base-url": { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const { inviteOwner } = await import("../workspaces/workspace-owners.service.js");
      const { createMailer } = await import("../client/mailer.js");
      const { MailSender } = await import("../mail/mail.sender.js");
      const all = await services();
      const baseUrl = dashboardBaseUrl(optStr(v, "base-url"), all.config);
      const invitation = await inviteOwner(all, { workspace: str(v, "workspace"), email: str(v, "email"), baseUrl });
      // The mail is the invitation: sent now rather than at the server's next look, and
      // should the relay refuse it, kept for the server to retry. Without SMTP_URL it lands
      // in <data dir>/outbox/, which is all the log would say.
      const mailer = createMailer(all.config, { info: () => {} });
      try {
        await new MailSender(all, mailer, { error: () => {}, warn: () => {} }).drain();
        return {
          json: { id: invitation.id, email: invitation.email, expires_at: isoOrNull(invitation.expiresAt) },
          text: `Invited ${invitation.email} to co-own ${str(v, "workspace")}: they accept by signing in at ${baseUrl}/dashboard before ${minute(invitation.expiresAt)}.`,
        };
      } finally {
        mailer.close();
      }
    },
  },
  "admin owner withdraw": {
    summary: "Withdraw the open invitation of an address to co-own a workspace.",
    usage: "warden admin owner withdraw --workspace S --email E",
    options: { workspace: { type: "string" }, email: { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const { withdrawInvitation } = await import("../workspaces/workspace-owners.service.js");
      const result = await withdrawInvitation(await services(), { workspace: str(v, "workspace"), email: str(v, "email") });
      return { json: result, text: result.withdrawn > 0 ? `Withdrew the invitation of ${str(v, "email")}.` : `${str(v, "email")} has no open invitation.` };
    },
  },
  "admin owner remove": {
    summary: "Remove an owner from a workspace (never its last): their dashboard sessions lose it from the next request.",
    usage: "warden admin owner remove --workspace S --email E",
    options: { workspace: { type: "string" }, email: { type: "string" } },
    required: ["workspace", "email"],
    async run({ values: v, services }) {
      const { removeOwner } = await import("../workspaces/workspace-owners.service.js");
      const result = await removeOwner(await services(), { workspace: str(v, "workspace"), email: str(v, "email") });
      return {
        json: { email: result.email, owners_left: result.ownersLeft },
        text: `Removed ${result.email} from ${str(v, "workspace")} (${result.ownersLeft} left).`,
      };
    },
  },
  "admin owner invitations": {
    summary: "List a workspace's owners and its open invitations.",
    usage: "warden admin owner invitations --workspace S",
    options: { workspace: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { listWorkspaceOwners } = await import("../workspaces/workspace-owners.service.js");
      const { owners, invitations } = await listWorkspaceOwners(await services(), { workspace: str(v, "workspace") });
      return {
        json: {
          owners: owners.map((o) => ({ email: o.email, added_at: isoOrNull(o.addedAt), suspended: o.suspendedAt !== null })),
          invitations: invitations.map((i) => ({ email: i.email, created_at: isoOrNull(i.createdAt), expires_at: isoOrNull(i.expiresAt) })),
        },
        text: [
          formatTable(
            ["OWNER", "SINCE"],
            owners.map((o) => [o.email, minute(o.addedAt)]),
          ),
          listText(
            "No open invitations.",
            ["INVITED", "EXPIRES"],
            invitations.map((i) => [i.email, minute(i.expiresAt)]),
          ),
        ].join("\n\n"),
      };
    },
  },
};
