// Mails every owner of a workspace when something that could hand it to someone else is
// done in it (GitHub and Stripe mail their account holders the same way): a live key
// created, a webhook secret revealed or rotated, an endpoint added, Stripe's secrets
// changed (or Paddle's), an owner invited, joined or removed. Written by the audit record, in the
// transaction of the change: a change is never made without its mail.
import type { Actor, ActorOrigin } from "../audit/audit.store.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { queueMails } from "../mail/mail.service.js";
import { findWorkspaceById } from "../workspaces/workspace.store.js";
import { listWorkspaceOwnerRows } from "../workspaces/workspace-owners.store.js";

/** Where an owner ends every session of theirs (the sessions page). */
const SESSIONS_PATH = "/dashboard/sessions";

interface Notified {
  action: string;
  workspaceId: string | null;
  env: Env | null;
  subject: string | null;
}

/** The notification's subject and opening sentence, or null when the action is not one owners are told of. */
function describe(what: Notified, workspace: string): { subject: string; sentence: string } | null {
  const env = what.env === null ? "" : ` (${what.env})`;
  const say = (subject: string, sentence: string) => ({ subject: `Warden: ${subject} in ${workspace}${env}`, sentence });
  switch (what.action) {
    case "key.created":
      return what.env === "live" ? say("a live API key was created", `A live API key (${what.subject}) was created in ${workspace}.`) : null;
    case "endpoint.added":
      return say("a webhook endpoint was added", `A webhook endpoint (${what.subject}) was added to ${workspace}${env}: it receives the workspace's events.`);
    case "endpoint.updated":
      return say(
        "a webhook endpoint was edited",
        `Webhook endpoint ${what.subject} in ${workspace}${env} was edited: its URL or the events it receives may have changed.`,
      );
    case "endpoint.secret_revealed":
      return say("a webhook secret was revealed", `The signing secret of webhook endpoint ${what.subject} in ${workspace}${env} was revealed.`);
    case "endpoint.secret_rotated":
      return say("a webhook secret was rotated", `The signing secret of webhook endpoint ${what.subject} in ${workspace}${env} was rotated.`);
    case "stripe.connected":
      return say("Stripe's secrets were changed", `Stripe's secrets for ${workspace}${env} were changed.`);
    case "stripe.disconnected":
      return say("Stripe was disconnected", `Stripe was disconnected from ${workspace}${env}: its secrets were removed.`);
    case "paddle.connected":
      return say("Paddle's secrets were changed", `Paddle's secrets for ${workspace}${env} were changed.`);
    case "paddle.disconnected":
      return say("Paddle was disconnected", `Paddle was disconnected from ${workspace}${env}: its secrets were removed.`);
    case "owner.invited":
      return say("an owner was invited", `${what.subject} was invited to co-own ${workspace}.`);
    case "owner.joined":
      return say("an owner joined", `${what.subject} joined ${workspace} as an owner.`);
    case "owner.removed":
      return say("an owner was removed", `${what.subject} was removed from the owners of ${workspace}.`);
    default:
      return null;
  }
}

const NOTIFIED = new Set([
  "key.created",
  "endpoint.added",
  "endpoint.updated",
  "endpoint.secret_revealed",
  "endpoint.secret_rotated",
  "stripe.connected",
  "stripe.disconnected",
  "paddle.connected",
  "paddle.disconnected",
  "owner.invited",
  "owner.joined",
  "owner.removed",
]);

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** Who acted: a signed-in owner, or an API key (an endpoint added or a secret revealed through the API). */
type Acting = Actor | { keyId: string; from?: ActorOrigin };

/**
 * Queues the notification of an action to each owner of its workspace (and to an owner
 * just removed, who is no longer one), when the action is one owners are told of.
 */
export async function notifyOwners(trx: Executor, actor: Acting, what: Notified, now: number): Promise<void> {
  // Decided before any read: grants and other actions of the API's hot paths pass through here.
  if (what.workspaceId === null || !NOTIFIED.has(what.action) || (what.action === "key.created" && what.env !== "live")) return;
  const workspace = await findWorkspaceById(trx, what.workspaceId);
  if (!workspace) return;
  const described = describe(what, workspace.name);
  if (described === null) return;
  const { subject, sentence } = described;
  const recipients = (await listWorkspaceOwnerRows(trx, what.workspaceId)).filter((o) => o.suspendedAt === null).map((o) => o.email);
  if (what.action === "owner.removed" && what.subject !== null && !recipients.includes(what.subject)) recipients.push(what.subject);
  const from = actor.from ? `${actor.from.ip}, ${actor.from.userAgent ?? "no browser named (no User-Agent)"}` : "not recorded";
  const advice =
    "email" in actor
      ? `If neither you nor another owner did this, someone may be signed in as ${actor.email}: open ${SESSIONS_PATH} on your Warden dashboard and end all sessions, then tell your operator.`
      : `If nobody you trust holds this key, revoke it on the dashboard's API keys page, open ${SESSIONS_PATH} and end all sessions, then tell your operator.`;
  const text = [
    sentence,
    "",
    `By: ${"email" in actor ? actor.email : `the API key ${actor.keyId}`}`,
    `When: ${utc(now)}`,
    `From: ${from}`,
    "",
    advice,
    "",
    "Every owner of the workspace gets this mail.",
  ].join("\n");
  // Nothing secret is in it: it is kept readable, unlike a code (mail/README.md).
  await queueMails(
    trx,
    null,
    recipients.map((to) => ({ kind: "owner-notification" as const, to, subject, text })),
    now,
  );
}
