// Owners' way into the dashboard, with no password anywhere: a code mailed to their
// address for the browser that asked, or a one-time link printed by the operator
// (`warden admin login-link`). Either opens a session kept in the database. Expected
// failures are ApiErrors; a wrong code is decided inside the transaction and thrown
// after it commits, so the spent try is kept.

import { type Actor, type ActorOrigin, recordAction } from "../audit/audit.service.js";
import { CODE_TTL_MS, hashCode, MAX_CODE_ATTEMPTS, newCode, sameHash, sha256 } from "../auth/mailed-code.js";
import { sessionOver, touchDue } from "../auth/web-session.js";
import { toIso } from "../clock.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import type { Executor } from "../db/database.js";
import { closeCode, takeCodeTry } from "../db/one-time-code.store.js";
import { invalidParameter } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";
import type { CodeAddress } from "../limits/limits.service.js";
import { queueMails } from "../mail/mail.service.js";
import type { Services } from "../services.js";
import { findOwnerByEmail, findOwnerById } from "../workspaces/workspace.store.js";
import { requireOwner } from "../workspaces/workspace-lookup.service.js";
import { acceptOwnerInvitations } from "../workspaces/workspace-owners.service.js";
import { findOpenLink, findOpenOwnerCode, type OwnerCode, type OwnerCodePurpose, replaceOwnerCode } from "./owner-code.store.js";
import { endOwnerSessionRow, findOwnerSession, insertOwnerSession, touchOwnerSession } from "./owner-session.store.js";

const LINK_TTL_MS = 15 * 60_000;

// Session tokens and link tokens: about 256 random bits, so SHA-256 is enough to store them.
const SESSION_TOKEN = /^wds_[0-9A-Za-z]{43}$/;
const LINK_TOKEN = /^wdl_[0-9A-Za-z]{43}$/;

/** An owner's address, as the limits count its wrong codes (across every workspace: an owner's sign-in is not a workspace's). */
const ownerAddress = (email: string): CodeAddress => ({ owner: true, emailNorm: normaliseEmail(email) });

/** A signed-in owner's session, as a page sees it. */
export interface OwnerSessionView {
  sessionId: string;
  actor: Actor;
}

// A User-Agent is the browser's to write: kept short, it is shown (escaped) and never parsed for a decision.
const USER_AGENT_MAX = 256;

/** What the browser keeps: the session token (shown to nobody else, stored hashed). */
export interface OpenedSession {
  token: string;
  actor: Actor;
}

/** Opens a session; where it was opened from (the actor's origin) is kept for the owner's sessions page. */
async function openSession(trx: Executor, actor: Actor & { from: ActorOrigin }, now: number): Promise<OpenedSession> {
  const token = `wds_${randomBase62(43)}`;
  await insertOwnerSession(trx, {
    id: `oss_${randomBase62(24)}`,
    ownerId: actor.ownerId,
    tokenHash: sha256(token),
    now,
    userAgent: actor.from.userAgent === null ? null : actor.from.userAgent.slice(0, USER_AGENT_MAX),
    address: actor.from.ip,
  });
  await recordAction(trx, actor, { action: "signed_in", workspaceId: null, env: null, subject: null }, now);
  // Signing in proves the address: the workspaces it was invited to co-own are its own from now.
  await acceptOwnerInvitations(trx, actor, now);
  return { token, actor };
}

/**
 * Mails a sign-in code for the browser holding `browser` (its pre-session secret). The
 * answer is the same whether or not the address is an owner's, in content and in the
 * work done before it: an unknown or suspended address gets a code row that never
 * verifies and no mail, an owner's a code row and a row in the mail outbox, written in
 * the same transaction; the mail goes out after the answer (mail/), so neither the
 * relay's time nor its refusal shows in it.
 */
export async function requestOwnerSignInCode(services: Services, input: { email: string; browser: string; source: string }) {
  const { db, clock, limits } = services;
  const email = input.email.trim();
  if (!isEmailShape(email)) throw invalidParameter("email", "Enter an email address such as you@example.com.");
  const now = clock.now();
  const emailNorm = normaliseEmail(email);
  await limits.countOwnerSignInRequest(db, { emailNorm, source: input.source }, now);
  const owner = await findOwnerByEmail(db, emailNorm);
  const ownerId = owner && owner.suspendedAt === null ? owner.id : null;
  const code = newCode();
  const id = `ocd_${randomBase62(24)}`;
  await db.transaction().execute(async (trx) => {
    await replaceOwnerCode(
      trx,
      {
        id,
        purpose: "sign-in",
        ownerId,
        email,
        binding: sha256(input.browser),
        codeHash: hashCode(id, code),
        actionHash: null,
        attempts: 0,
        createdAt: now,
        expiresAt: now + CODE_TTL_MS,
      },
      now,
    );
    if (owner && ownerId !== null) {
      const mail = {
        kind: "owner-sign-in-code" as const,
        to: owner.email,
        subject: `${code} is your Warden sign-in code`,
        text: `Your code to sign in to the Warden dashboard is ${code}.\nIt works once, for 10 minutes, in the browser where you asked for it.\n\nIf you did not ask to sign in, ignore this mail.`,
      };
      await queueMails(trx, services.secretBox, [mail], now);
    }
  });
  if (ownerId !== null) services.signals.wakeMail();
  return { email, expiresAt: now + CODE_TTL_MS };
}

/** The address a browser's open sign-in code was sent to, or null when it has none. */
export async function findPendingSignIn(services: Services, browser: string): Promise<{ email: string; expiresAt: number } | null> {
  const open = await findOpenOwnerCode(services.db, sha256(browser), "sign-in", MAX_CODE_ATTEMPTS, services.clock.now());
  return open ? { email: open.email, expiresAt: open.expiresAt } : null;
}

type CodeRefusal = "no_code" | "wrong_code" | "other_action";
type CodeOutcome<T> = { ok: true; value: T } | { ok: false; reason: Exclude<CodeRefusal, "wrong_code"> } | { ok: false; reason: "wrong_code"; email: string };

/**
 * Checks a code of a binding inside a transaction, taking one try; `before` may refuse
 * the code before any try is taken, `then` runs on a match.
 * A confirmation code must also have been mailed for `actionHash`: one for another action
 * or target is refused (the try spent, the code left open) before the code is compared.
 */
async function useCode<T>(
  trx: Executor,
  binding: string,
  purpose: OwnerCodePurpose,
  code: string,
  now: number,
  then: (ownerId: string) => Promise<T>,
  actionHash: string | null = null,
  before?: (open: OwnerCode) => Promise<void>,
): Promise<CodeOutcome<T>> {
  const open = await findOpenOwnerCode(trx, binding, purpose, MAX_CODE_ATTEMPTS, now);
  if (open && before) await before(open);
  if (!open || !(await takeCodeTry(trx, "owner_codes", open.id, MAX_CODE_ATTEMPTS))) return { ok: false, reason: "no_code" };
  if (open.actionHash !== actionHash) return { ok: false, reason: "other_action" };
  if (!/^\d{6}$/.test(code) || !sameHash(open.codeHash, hashCode(open.id, code)) || open.ownerId === null) {
    return { ok: false, reason: "wrong_code", email: open.email };
  }
  if (!(await closeCode(trx, "owner_codes", open.id, now))) return { ok: false, reason: "no_code" };
  return { ok: true, value: await then(open.ownerId) };
}

function refuseCode(reason: CodeRefusal): never {
  if (reason === "other_action") throw invalidParameter("code", "That code was mailed to confirm something else. Ask for a new code from this page.");
  if (reason === "no_code") throw invalidParameter("code", "No code is waiting: it expired, was used, or had 5 wrong tries. Ask for a new one.");
  throw invalidParameter("code", "That code is not right. Check the latest mail and try again.");
}

/**
 * Verifies the browser's sign-in code and opens a session. Wrong tries are counted per
 * address across every browser and source (LimitsService.assertCodeTriesLeft);
 * a sign-in clears them.
 */
export async function verifyOwnerSignInCode(services: Services, input: { browser: string; code: string; from: ActorOrigin }): Promise<OpenedSession> {
  const { db, clock, limits } = services;
  const now = clock.now();
  const outcome = await db.transaction().execute(async (trx) => {
    const used = await useCode(
      trx,
      sha256(input.browser),
      "sign-in",
      input.code.trim(),
      now,
      async (ownerId) => {
        const owner = await findOwnerById(trx, ownerId);
        if (!owner || owner.suspendedAt !== null) return null;
        await limits.clearCodeFailures(trx, ownerAddress(owner.email));
        return openSession(trx, { ownerId: owner.id, email: owner.email, from: input.from }, now);
      },
      null,
      (open) => limits.assertCodeTriesLeft(trx, ownerAddress(open.email), now),
    );
    if (!used.ok && used.reason === "wrong_code") await limits.countCodeFailure(trx, ownerAddress(used.email), now);
    return used;
  });
  if (!outcome.ok) refuseCode(outcome.reason);
  if (outcome.value === null) throw invalidParameter("email", "This owner is suspended and cannot sign in.");
  return outcome.value;
}

/** A one-time sign-in link's token for an owner (the operator's `warden admin login-link`). */
export async function createOwnerLoginLink(services: Services, input: { email: string }): Promise<{ token: string; email: string; expiresAt: string }> {
  const { db, clock } = services;
  const owner = await requireOwner(db, input.email);
  if (owner.suspendedAt !== null) throw invalidParameter("email", `${owner.email} is suspended; lift the suspension first.`);
  const now = clock.now();
  const token = `wdl_${randomBase62(43)}`;
  await replaceOwnerCode(
    db,
    {
      id: `ocd_${randomBase62(24)}`,
      purpose: "link",
      ownerId: owner.id,
      email: owner.email,
      // Bound to the owner, so that a newer link closes the older ones still open: a link
      // printed into a chat or a ticket earlier is dead once the operator prints another.
      binding: `owner:${owner.id}`,
      codeHash: sha256(token),
      actionHash: null,
      attempts: 0,
      createdAt: now,
      expiresAt: now + LINK_TTL_MS,
    },
    now,
  );
  return { token, email: owner.email, expiresAt: toIso(now + LINK_TTL_MS) };
}

/** Who a link would sign in, without using it (the page that asks to confirm). */
export async function findOwnerLoginLink(services: Services, token: string): Promise<{ email: string } | null> {
  if (!LINK_TOKEN.test(token)) return null;
  const open = await findOpenLink(services.db, sha256(token), services.clock.now());
  return open ? { email: open.email } : null;
}

/** Uses a one-time link up and opens a session; null when it is unknown, used or expired. */
export async function redeemOwnerLoginLink(services: Services, token: string, from: ActorOrigin): Promise<OpenedSession | null> {
  if (!LINK_TOKEN.test(token)) return null;
  const { db, clock, limits } = services;
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const open = await findOpenLink(trx, sha256(token), now);
    if (!open || open.ownerId === null || !(await closeCode(trx, "owner_codes", open.id, now))) return null;
    const owner = await findOwnerById(trx, open.ownerId);
    if (!owner || owner.suspendedAt !== null) return null;
    // The operator's link is the way back in after the wrong tries' ceiling: codes work again from it.
    await limits.clearCodeFailures(trx, ownerAddress(owner.email));
    return openSession(trx, { ownerId: owner.id, email: owner.email, from }, now);
  });
}

/**
 * The session of a token, or null: unknown, ended, idle or past its absolute end, or its
 * owner suspended (read on every request, so a suspension applies to the next page).
 */
export async function authenticateOwnerSession(services: Services, token: string, address: string | null = null): Promise<OwnerSessionView | null> {
  if (!SESSION_TOKEN.test(token)) return null;
  const { db, clock } = services;
  const now = clock.now();
  const session = await findOwnerSession(db, sha256(token));
  if (!session) return null;
  if (session.ownerSuspended || sessionOver(session, now)) {
    await endOwnerSessionRow(db, session.id, now);
    return null;
  }
  if (touchDue(session, now) || (address !== null && address !== session.address)) {
    await touchOwnerSession(db, session.id, now, address ?? session.address);
  }
  return { sessionId: session.id, actor: { ownerId: session.ownerId, email: session.ownerEmail } };
}

/** Signs out: the session ends in the database, whatever the browser keeps. */
export async function endOwnerSession(services: Services, session: OwnerSessionView): Promise<void> {
  const now = services.clock.now();
  await services.db.transaction().execute(async (trx) => {
    if (await endOwnerSessionRow(trx, session.sessionId, now)) {
      await recordAction(trx, session.actor, { action: "signed_out", workspaceId: null, env: null, subject: null }, now);
    }
  });
}

/**
 * What a confirmation code confirms: the action in the owner's words (it is the mail's
 * subject) and its target in full (workspace and environment ids, the object's id, the
 * values typed, such as a signing secret or an address to invite). Only its hash is kept.
 */
export interface ConfirmedAction {
  action: string;
  target: readonly string[];
}

// From the configured public origin, never a request's Host (its sender writes it).
const sessionsPageUrl = (services: Services) => `${services.config.publicUrl}/dashboard/sessions`;

const actionHashOf = (confirms: ConfirmedAction) => sha256(JSON.stringify([confirms.action, ...confirms.target]));

/**
 * Mails a fresh code that a dangerous action of this session must be confirmed with; the
 * code confirms that action on that target only (see docs/decisions.md, "A code for one
 * action"). A newer code closes the session's older ones.
 */
export async function requestConfirmationCode(services: Services, session: OwnerSessionView, input: { confirms: ConfirmedAction }) {
  const { db, clock, limits } = services;
  const now = clock.now();
  // The session's own quota, apart from sign-in codes: nobody else can use it up.
  await limits.countConfirmationRequest(db, { sessionId: session.sessionId }, now);
  const code = newCode();
  const id = `ocd_${randomBase62(24)}`;
  await db.transaction().execute(async (trx) => {
    await replaceOwnerCode(
      trx,
      {
        id,
        purpose: "confirm",
        ownerId: session.actor.ownerId,
        email: session.actor.email,
        binding: session.sessionId,
        codeHash: hashCode(id, code),
        actionHash: actionHashOf(input.confirms),
        attempts: 0,
        createdAt: now,
        expiresAt: now + CODE_TTL_MS,
      },
      now,
    );
    const mail = {
      kind: "owner-confirm-code" as const,
      to: session.actor.email,
      subject: `${code} is your code to confirm: ${input.confirms.action}`,
      text: `Your code to confirm "${input.confirms.action}" in the Warden dashboard is ${code}.\nIt works once, for 10 minutes, for this and nothing else.\n\nIf you did not ask for it, someone may be using your session: end your other sessions at ${sessionsPageUrl(services)} and tell your operator.`,
    };
    await queueMails(trx, services.secretBox, [mail], now);
  });
  services.signals.wakeMail();
  return { expiresAt: now + CODE_TTL_MS };
}

/** Checks (and uses up) this session's confirmation code for this action, or throws a clear error on `code`. */
export async function verifyConfirmationCode(services: Services, session: OwnerSessionView, code: string, confirms: ConfirmedAction): Promise<void> {
  const now = services.clock.now();
  const outcome = await services.db
    .transaction()
    .execute((trx) => useCode(trx, session.sessionId, "confirm", code.trim(), now, async () => true, actionHashOf(confirms)));
  if (!outcome.ok) refuseCode(outcome.reason);
}
