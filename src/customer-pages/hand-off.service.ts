// The two one-time tokens between the hosted pages and an extension (docs/decisions.md,
// "Hosted pages" and "Page tickets"): a hand-off code the sign-in page sends to the
// extension's redirect, which only the holder of the PKCE verifier exchanges for a device
// session; and a page ticket a signed-in extension asks for, which opens a page that asks
// "Continue as …?" before it signs the browser in. Both live 60 s, are used once and are
// stored only as SHA-256.
import { hash } from "node:crypto";
import { sha256 } from "../auth/mailed-code.js";
import { openDeviceSession, resolveWorkspaceTool } from "../client/client.service.js";
import type { DeviceSession } from "../client/device-session.store.js";
import { toIso } from "../clock.js";
import { syncCustomer, toolScope } from "../customers/customer.service.js";
import { normaliseEmail } from "../customers/email.js";
import { findPersonById, markPersonSignedIn } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { openCustomerSession, type PageScope } from "./customer-session.service.js";
import { setCustomerSessionDevice } from "./customer-session.store.js";
import { type ExchangeKind, type ExchangeToken, findOpenExchangeToken, insertExchangeToken, spendExchangeToken } from "./exchange-token.store.js";

export const EXCHANGE_TTL_MS = 60_000;
/**
 * How long a browser has to answer "Continue as …?" for a ticket's link it opened: the
 * ticket it holds in a cookie for that question, never in an address, lives as long as a
 * sign-in code. The link's own ticket keeps its 60 s and is spent when opened.
 */
export const HELD_TICKET_TTL_MS = 10 * 60_000;
const HAND_OFF_CODE = /^wac_[0-9A-Za-z]{43}$/;
const PAGE_TICKET = /^wpt_[0-9A-Za-z]{43}$/;
const HELD_TICKET = /^wph_[0-9A-Za-z]{43}$/;

// Each kind its own prefix: a held question's ticket (longer-lived, never in a URL) is
// refused where a link's ticket is taken, and the other way round.
const TOKEN_PREFIX: Record<ExchangeKind, string> = { hand_off: "wac", page_ticket: "wpt", page_question: "wph" };

async function issueToken(
  ex: Executor,
  now: number,
  kind: ExchangeKind,
  input: { workspaceId: string; env: Env; toolId: string; personId: string; licenceId: string | null; codeChallenge: string | null; deviceId: string | null },
  ttlMs = EXCHANGE_TTL_MS,
) {
  const token = `${TOKEN_PREFIX[kind]}_${randomBase62(43)}`;
  const expiresAt = now + ttlMs;
  await insertExchangeToken(ex, { id: `cx_${randomBase62(24)}`, kind, ...input, tokenHash: sha256(token), createdAt: now, expiresAt });
  return { token, expiresAt };
}

/** A hand-off code for the signed-in person of a page, bound to the tool and to the extension's PKCE challenge (S256). */
export async function issueHandOffCode(services: Services, scope: PageScope, input: { personId: string; codeChallenge: string }): Promise<string> {
  const issued = await issueToken(services.db, services.clock.now(), "hand_off", {
    workspaceId: scope.workspace.id,
    env: scope.env,
    toolId: scope.tool.id,
    personId: input.personId,
    licenceId: null,
    codeChallenge: input.codeChallenge,
    deviceId: null,
  });
  return issued.token;
}

/** The S256 challenge of a PKCE verifier (RFC 7636 §4.2): base64url of its SHA-256, no padding. */
export const challengeOf = (verifier: string) => hash("sha256", verifier, "base64url");

/**
 * Exchanges a hand-off code for a new device session of its person, as verify answers.
 * The code is spent by the first attempt, right or wrong; every refusal names its field.
 */
export async function exchangeHandOffCode(
  services: Services,
  input: {
    hostname: string;
    toolId: string;
    body: { workspace?: string; env?: Env; code: string; code_verifier: string; device: { name: string; platform: string } };
  },
) {
  const { db, clock } = services;
  const { body } = input;
  const { workspace, tool } = await resolveWorkspaceTool(services, input.hostname, body.workspace, input.toolId);
  const env = body.env ?? "live";
  const now = clock.now();
  const opened = await db.transaction().execute(async (trx) => {
    const code = HAND_OFF_CODE.test(body.code) ? await spendExchangeToken(trx, "hand_off", sha256(body.code), now) : null;
    if (code === null || code.expiresAt <= now) return "spent" as const;
    if (code.workspaceId !== workspace.id || code.env !== env || code.toolId !== tool.id) return "elsewhere" as const;
    if (code.codeChallenge === null || challengeOf(body.code_verifier) !== code.codeChallenge) return "wrong_verifier" as const;
    await markPersonSignedIn(trx, code.personId, now);
    const device = await openDeviceSession(trx, {
      workspaceId: workspace.id,
      env,
      toolId: tool.id,
      personId: code.personId,
      licenceId: null,
      device: body.device,
      now,
    });
    await syncCustomer(trx, toolScope(workspace.id, env, tool.id), code.personId, now, now);
    const person = await findPersonById(trx, workspace.id, env, code.personId);
    if (!person) throw new Error(`hand-off code of a person who is gone: ${code.personId}`);
    return { ...device, email: person.email };
  });
  if (opened === "spent") throw invalidParameter("code", "This code is unknown, used or expired (a code works once, for 60 seconds): sign in again.");
  if (opened === "elsewhere") throw invalidParameter("code", "This code was given for another tool, workspace or environment.");
  if (opened === "wrong_verifier")
    throw invalidParameter("code_verifier", "code_verifier does not match the code_challenge the sign-in page was opened with; the code is now spent.");
  return opened;
}

/** A page ticket for the device's person (and licence, for a key-activated device): the page it opens is signed in. */
export async function issuePageTicket(services: Services, session: DeviceSession, toolId: string) {
  if (toolId !== session.toolId) throw notFound(`This device is signed in to tool "${session.toolId}", not "${toolId}".`);
  // Counted before the ticket is written: a device over its minute writes no row.
  const now = services.clock.now();
  await services.limits.countPageTicket(services.db, session, now);
  const issued = await issueToken(services.db, now, "page_ticket", {
    workspaceId: session.workspaceId,
    env: session.env,
    toolId,
    personId: session.personId,
    licenceId: session.licenceId,
    codeChallenge: null,
    // The page it opens marks this device as the one in use (Manage's "This device").
    deviceId: session.deviceId,
  });
  return { ticket: issued.token, expires_at: toIso(issued.expiresAt) };
}

const opensPage = (ticket: ExchangeToken, scope: PageScope) =>
  ticket.workspaceId === scope.workspace.id && ticket.env === scope.env && ticket.toolId === scope.tool.id;

/** Who a page is signed in as: a person, for one licence only when the session came from a key-activated device. */
interface SignedInAs {
  sessionId: string;
  personId: string;
  licenceId: string | null;
}

/**
 * A page ticket's link opened in a browser: a GET, which any site or mail can make a
 * browser do, so it signs nobody in (login CSRF: a victim signed in as the attacker buys
 * for the attacker). The link's ticket is spent. A browser signed in as the ticket's
 * person already, for at least as much (a session by address covers the person's
 * licences), keeps its session, which now names the ticket's device: null. Otherwise the ticket moves into a new one that the
 * browser holds in a cookie for its question "Continue as …?" (HELD_TICKET_TTL_MS); a
 * ticket that does not open this page is null too.
 */
export async function openPageTicket(services: Services, scope: PageScope, ticket: string, signedIn: SignedInAs | null): Promise<string | null> {
  if (!PAGE_TICKET.test(ticket)) return null;
  const { db, clock } = services;
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const found = await spendExchangeToken(trx, "page_ticket", sha256(ticket), now);
    if (found === null || found.expiresAt <= now || !opensPage(found, scope)) return null;
    if (signedIn !== null && signedIn.personId === found.personId && (signedIn.licenceId === null || signedIn.licenceId === found.licenceId)) {
      if (found.deviceId !== null) await setCustomerSessionDevice(trx, signedIn.sessionId, found.deviceId);
      return null;
    }
    const { workspaceId, env, toolId, personId, licenceId, deviceId } = found;
    const held = await issueToken(
      trx,
      now,
      "page_question",
      { workspaceId, env, toolId, personId, licenceId, codeChallenge: null, deviceId },
      HELD_TICKET_TTL_MS,
    );
    return held.token;
  });
}

/** Who a held ticket would sign in, for its question: the address, null for a key-activated device's; or null when it opens this page no more. */
export async function findHeldPageTicket(services: Services, scope: PageScope, held: string): Promise<{ email: string | null } | null> {
  if (!HELD_TICKET.test(held)) return null;
  const found = await findOpenExchangeToken(services.db, "page_question", sha256(held), services.clock.now());
  if (found === null || !opensPage(found, scope)) return null;
  if (found.licenceId !== null) return { email: null };
  const person = await findPersonById(services.db, found.workspaceId, found.env, found.personId);
  return person ? { email: person.email } : null;
}

/**
 * The person's answer to a held ticket's question: the ticket is spent either way;
 * accepted, a web session of its person is opened (its token answered). Null when
 * declined, or when the ticket no longer opens this page (used, expired, elsewhere).
 */
export async function answerHeldPageTicket(services: Services, scope: PageScope, held: string, accepted: boolean): Promise<string | null> {
  if (!HELD_TICKET.test(held)) return null;
  const { db, clock } = services;
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const found = await spendExchangeToken(trx, "page_question", sha256(held), now);
    if (!accepted || found === null || found.expiresAt <= now || !opensPage(found, scope)) return null;
    const { workspaceId, env, personId, licenceId, deviceId } = found;
    if (licenceId === null) {
      // A device signed in by the address vouches for it as a right code does: its wrong codes are no longer in a row.
      const person = await findPersonById(trx, workspaceId, env, personId);
      if (person) await services.limits.clearCodeFailures(trx, { owner: false, workspaceId, env, emailNorm: normaliseEmail(person.email) });
    }
    return openCustomerSession(trx, { workspaceId, env, personId, licenceId, deviceId, now });
  });
}
