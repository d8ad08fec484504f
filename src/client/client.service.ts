// The client API's use cases: sign-in by emailed code, device sessions, the access
// check. Expected failures are ApiErrors; a wrong code is decided inside the
// transaction and thrown after it commits, so the spent try is kept.

import { slugFromHost } from "../auth/key.service.js";
import { CODE_TTL_MS, hashCode, MAX_CODE_ATTEMPTS, newCode, sameHash, sha256 } from "../auth/mailed-code.js";
import { toIso } from "../clock.js";
import { findBrand } from "../customer-pages/branding.store.js";
import { nextChangeOf, tagsOf } from "../customers/answer-cache.js";
import { syncCustomer, toolScope } from "../customers/customer.service.js";
import { loadSources } from "../customers/customer-sources.store.js";
import { insertDevice } from "../customers/device.store.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import { computeEntitlement, type Sources } from "../customers/entitlement.js";
import { ensurePerson, markPersonSignedIn } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import { closeCode, takeCodeTry } from "../db/one-time-code.store.js";
import type { Env } from "../db/schema.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import type { PageLocale } from "../i18n/locales.js";
import { messagesFor } from "../i18n/messages.js";
import { negotiate } from "../i18n/negotiate.js";
import { newId, randomBase62 } from "../ids.js";
import type { CodeAddress, LimitsService } from "../limits/limits.service.js";
import { queueMails } from "../mail/mail.service.js";
import type { Services } from "../services.js";
import { type AccessClaims, audienceOf, MAX_TOKEN_SECONDS, signAccessToken, TOKEN_ISSUER } from "../tokens/access-token.js";
import { creditsVersion } from "../usage/credits.store.js";
import { heldTerms } from "../usage/held-terms.js";
import { cachedToolTerms } from "../usage/terms-cache.js";
import { namesForPage } from "../workspaces/translated-names.service.js";
import { findTool, findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import type { Access, SignInBody, VerifyBody } from "./client.schema.js";
import {
  type DeviceSession,
  type DeviceView,
  findDeviceSession,
  findDeviceSessionWithSources,
  listSignedInDevices,
  type PersonScope,
  type SessionLookup,
  type Query as SessionQuery,
  setSessionToken,
  signOutDevice,
  touchDevice,
} from "./device-session.store.js";
import { type CodeLookup, findOpenSignInCode, replaceSignInCode } from "./sign-in-code.store.js";

/** The longest an access answer may be kept: a revocation locks within 15 minutes. */
export const MAX_RECHECK_SECONDS = 900;
// `wdt_` + 43 base62 characters: about 256 random bits, so SHA-256 is enough to store it.
const TOKEN_SHAPE = /^wdt_[0-9A-Za-z]{43}$/;

/** Who a sign-in code is for: an address, in a workspace environment, asked from one tool. */
export interface SignInTarget {
  workspaceId: string;
  env: Env;
  toolId: string;
  toolName: string;
  email: string;
  emailNorm: string;
}

/** The target of a sign-in of `email` to a tool found already, or a refusal of the address. */
export function signInTarget(workspaceId: string, env: Env, tool: { id: string; name: string }, email: string): SignInTarget {
  if (!isEmailShape(email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  return { workspaceId, env, toolId: tool.id, toolName: tool.name, email, emailNorm: normaliseEmail(email) };
}

/** The workspace (from the body, else the Host) and the tool a client request is for. */
export async function resolveWorkspaceTool(services: Services, hostname: string, workspaceSlug: string | undefined, toolId: string) {
  const hostSlug = slugFromHost(hostname, services.config.domain);
  if (hostSlug !== null && workspaceSlug !== undefined && workspaceSlug !== hostSlug) {
    throw invalidParameter("workspace", `This address is workspace "${hostSlug}"'s; leave workspace out or ask at the right address.`);
  }
  const slug = workspaceSlug ?? hostSlug;
  if (slug === null) throw invalidParameter("workspace", "Name the workspace (its slug), or ask at https://<workspace>.<domain>/api/client/v1.");
  const workspace = await findWorkspaceBySlug(services.db, slug);
  if (!workspace) throw notFound(`No workspace "${slug}".`);
  const tool = await findTool(services.db, workspace.id, toolId);
  if (!tool) throw notFound(`No tool "${toolId}" in this workspace.`);
  return { workspace, tool };
}

/** The workspace, tool, environment and address a sign-in is for. */
async function resolveTarget(services: Services, hostname: string, body: SignInBody): Promise<SignInTarget> {
  const { workspace, tool } = await resolveWorkspaceTool(services, hostname, body.workspace, body.tool);
  return signInTarget(workspace.id, body.env ?? "live", tool, body.email);
}

/**
 * The extension's sign-in: the code's mail in the language it names (`lang`, the
 * extension's UI language), as a hosted page would be, else the workspace's default
 * language, else English; the tool named as the vendor named it in that language.
 */
export async function requestSignIn(services: Services, input: { hostname: string; source: string; body: SignInBody }) {
  const target = await resolveTarget(services, input.hostname, input.body);
  const brand = await findBrand(services.db, target.workspaceId);
  const locale = negotiate({ query: input.body.lang, workspaceDefault: brand?.language ?? null });
  const names = await namesForPage(services.answers, services.db, target.workspaceId, locale);
  return mailSignInCode(
    services,
    { ...target, toolName: names.product("tool", target.toolId, target.toolName) },
    { source: input.source, browserHash: null, locale },
  );
}

/**
 * Mails a new code to the target's address (within the sign-in limits), replacing any
 * open one. `browserHash` binds a hosted page's code to the browser that asked for it.
 */
export async function mailSignInCode(services: Services, target: SignInTarget, input: { source: string; browserHash: string | null; locale?: PageLocale }) {
  const { db, clock, limits } = services;
  const now = clock.now();
  await limits.countSignInRequest(db, { workspaceId: target.workspaceId, env: target.env, emailNorm: target.emailNorm, source: input.source }, now);
  const code = newCode();
  const id = `sic_${randomBase62(24)}`;
  await db.transaction().execute(async (trx) => {
    await replaceSignInCode(
      trx,
      {
        id,
        workspaceId: target.workspaceId,
        env: target.env,
        toolId: target.toolId,
        email: target.email,
        emailNorm: target.emailNorm,
        codeHash: hashCode(id, code),
        attempts: 0,
        createdAt: now,
        expiresAt: now + CODE_TTL_MS,
        browserHash: input.browserHash,
      },
      now,
    );
    // Sent after the answer (mail/): a relay that is slow or refuses does not fail the request, and the mail is retried.
    // In the language of the page that asked (English for the client API's sign-in, which names none).
    const words = messagesFor(input.locale ?? "en");
    const mail = {
      kind: "client-sign-in-code" as const,
      to: target.email,
      subject: words.text("mail.signIn.subject", { code, tool: target.toolName }),
      text: words.text("mail.signIn.text", { code, tool: target.toolName }),
    };
    await queueMails(trx, services.secretBox, [mail], now);
  });
  services.signals.wakeMail();
  return { sent: true as const, expires_at: toIso(now + CODE_TTL_MS) };
}

export function deviceView(device: DeviceView, currentId: string | null) {
  return {
    id: device.id,
    tool: device.toolId,
    name: device.name,
    platform: device.platform,
    created_at: toIso(device.createdAt),
    last_active_at: device.lastActiveAt === null ? null : toIso(device.lastActiveAt),
    current: device.id === currentId,
  };
}

/** A new device of the person with its session token (shown once, stored hashed). */
export async function openDeviceSession(
  trx: Executor,
  input: { workspaceId: string; env: Env; toolId: string; personId: string; licenceId: string | null; device: { name: string; platform: string }; now: number },
) {
  const device: DeviceView = {
    id: newId("dev"),
    toolId: input.toolId,
    name: input.device.name,
    platform: input.device.platform,
    createdAt: input.now,
    lastActiveAt: null,
  };
  await insertDevice(trx, {
    ...device,
    workspaceId: input.workspaceId,
    env: input.env,
    personId: input.personId,
    licenceId: input.licenceId,
    signedOutAt: null,
  });
  const token = `wdt_${randomBase62(43)}`;
  await setSessionToken(trx, device.id, sha256(token));
  return { token, device: deviceView(device, device.id) };
}

/** Some actions are the person's own, not a device's activated with a licence key. */
export function requireSignedIn(person: Pick<PersonScope, "licenceId">, action: string): void {
  if (person.licenceId !== null) {
    throw new ApiError("authentication_failed", `This device was activated with a licence key; sign in with your email address to ${action}.`);
  }
}

export async function verifySignIn(services: Services, input: { hostname: string; body: VerifyBody }) {
  const { db, clock, limits } = services;
  const { body } = input;
  const target = await resolveTarget(services, input.hostname, body);
  const now = clock.now();
  const opened = await db.transaction().execute(async (trx) => {
    const person = await acceptSignInCode(trx, limits, { workspaceId: target.workspaceId, env: target.env, emailNorm: target.emailNorm }, body.code, now);
    if (typeof person === "string") return person;
    const opened = await openDeviceSession(trx, {
      workspaceId: target.workspaceId,
      env: target.env,
      toolId: target.toolId,
      personId: person.id,
      licenceId: null,
      device: body.device,
      now,
    });
    // The sign-in makes the person a customer of the tool (a member, or a holder of what they already have).
    await syncCustomer(trx, toolScope(target.workspaceId, target.env, target.toolId), person.id, now, now);
    return { ...opened, email: person.email };
  });
  return throwCodeRefusal(opened);
}

/**
 * Spends a try of the open code (of an address, or of a hosted page's browser) and, when
 * it is right, closes it and signs its person in. A wrong code is answered, not thrown, so
 * that the transaction commits the spent try and its count; `throwCodeRefusal` throws it
 * afterwards. Past the address's ceiling of wrong codes in a row, no code is compared.
 */
export async function acceptSignInCode(trx: Executor, limits: LimitsService, lookup: CodeLookup, code: string, now: number) {
  const open = await findOpenSignInCode(trx, lookup, MAX_CODE_ATTEMPTS, now);
  if (!open) return "no_code" as const;
  // Wrong codes count per address and environment, whichever browser or device guessed (the owners' ceiling, limits/).
  const address: CodeAddress = { owner: false, workspaceId: lookup.workspaceId, env: lookup.env, emailNorm: open.emailNorm };
  await limits.assertCodeTriesLeft(trx, address, now);
  if (!(await takeCodeTry(trx, "sign_in_codes", open.id, MAX_CODE_ATTEMPTS))) return "no_code" as const;
  if (!sameHash(open.codeHash, hashCode(open.id, code))) {
    await limits.countCodeFailure(trx, address, now);
    return "wrong_code" as const;
  }
  if (!(await closeCode(trx, "sign_in_codes", open.id, now))) return "no_code" as const;
  await limits.clearCodeFailures(trx, address);
  const person = await ensurePerson(trx, lookup.workspaceId, lookup.env, open.email, now);
  await markPersonSignedIn(trx, person.id, now);
  return person;
}

/** The address and expiry of the open code asked in a hosted page's browser, or null. */
export async function findPendingSignIn(services: Services, lookup: CodeLookup): Promise<{ email: string; expiresAt: number } | null> {
  const open = await findOpenSignInCode(services.db, lookup, MAX_CODE_ATTEMPTS, services.clock.now());
  return open ? { email: open.email, expiresAt: open.expiresAt } : null;
}

/** The outcome of a sign-in, or the refusal of its code as a field error. */
export function throwCodeRefusal<T>(outcome: T | "no_code" | "wrong_code"): T {
  if (outcome === "no_code") {
    throw invalidParameter("code", "No code is waiting for this address: it expired, was used, or had 5 wrong tries. Ask for a new one.");
  }
  if (outcome === "wrong_code") throw invalidParameter("code", "That code is not right.");
  return outcome;
}

interface DeviceRequest {
  hostname: string;
  source: string;
  authorization: string | undefined;
}

/**
 * The device session of a bearer token, found with `find` (one statement that also reads
 * the source address's wrong-key count), or 401. Wrong tokens count against the source
 * address like wrong API keys.
 */
async function authenticate<L extends SessionLookup>(
  services: Services,
  input: DeviceRequest,
  find: (ex: Executor, query: SessionQuery) => Promise<L>,
): Promise<L & { session: DeviceSession }> {
  const { db, clock, limits } = services;
  if (!input.authorization) throw new ApiError("authentication_failed", "Send the device token as Authorization: Bearer <token>.");
  const now = clock.now();
  const presented = input.authorization.startsWith("Bearer ") ? input.authorization.slice(7) : "";
  const tokenHash = sha256(presented);
  const found = await find(db, { tokenHash, sourceScope: limits.wrongKeyScope(input.source) });
  limits.assertSourceCountNotBlocked(input.source, found.source, now);
  const session = TOKEN_SHAPE.test(presented) ? found.session : null;
  if (!session || !sameHash(session.tokenHash, tokenHash)) {
    const limited = await limits.countWrongKey(db, input.source, now);
    throw limited ?? new ApiError("authentication_failed", "This device token is unknown or signed out: sign in again.");
  }
  assertSameWorkspace(services, input, session);
  return { ...found, session };
}

function assertSameWorkspace(services: Services, input: DeviceRequest, session: DeviceSession): void {
  const hostSlug = slugFromHost(input.hostname, services.config.domain);
  if (hostSlug !== null && hostSlug !== session.workspaceSlug) throw new ApiError("authentication_failed", "This device token belongs to another workspace.");
}

interface KeptSession {
  session: DeviceSession;
  sources: Sources | null;
  credits: Credits;
}

/** The version of the person's credits of the tool (credits.store.ts), null for a device activated with a licence key, which cannot spend them. */
type Credits = { rows: number; held: number } | null;

function creditsOf(services: Services, session: DeviceSession): Promise<Credits> {
  if (session.licenceId !== null) return Promise.resolve(null);
  return creditsVersion(services.db, toolScope(session.workspaceId, session.env, session.toolId), session.personId);
}

const keptSessionKey = (tokenHash: string) => `session\u0000${tokenHash}`;

/**
 * The device session and sources of a bearer token from the answer cache, or undefined.
 * Only found sessions are kept (by the token's hash), so a wrong token always reaches the
 * database and its count. The source address's wrong-token count, written by every
 * process, is checked as a remembered API key's is: against the addresses blocked when
 * the watch last read them (within two seconds), else read. Read on every check, it was
 * the one statement of a check answered from memory (bench/journal.md, issue 48).
 */
async function keptSession(services: Services, input: DeviceRequest): Promise<KeptSession | undefined> {
  const presented = input.authorization?.startsWith("Bearer ") ? input.authorization.slice(7) : "";
  if (!TOKEN_SHAPE.test(presented)) return undefined;
  const kept = services.answers.get<KeptSession>(keptSessionKey(sha256(presented)));
  if (!kept) return undefined;
  const { limits, clock } = services;
  const now = clock.now();
  if (limits.knowsBlockedSources(now)) limits.assertSourceKnownNotBlocked(input.source, now);
  else await limits.assertSourceNotBlocked(services.db, input.source, now);
  assertSameWorkspace(services, input, kept.session);
  return kept;
}

/** The device session of a bearer token, or 401. */
export async function authenticateDevice(services: Services, input: DeviceRequest): Promise<DeviceSession> {
  return (await authenticate(services, input, findDeviceSession)).session;
}

/**
 * The access check of the device with this bearer token: the device, its person's
 * sources and the source address's counter in one read, then the answer signed. The
 * hottest client path: every installed extension asks every few minutes.
 */
export async function checkDeviceAccess(services: Services, input: DeviceRequest & { toolId: string }): Promise<Access> {
  // Before anything is read: a change noted meanwhile keeps what this check read, and the token it signs, out of the cache.
  const ticket = services.answers.ticket();
  const kept = await keptSession(services, input);
  if (kept) return answerAccess(services, kept.session, input.toolId, kept.sources, kept.credits, ticket);
  const { session, sources, credits } = await authenticate(services, input, findDeviceSessionWithSources);
  services.answers.set(keptSessionKey(session.tokenHash), { session, sources, credits } satisfies KeptSession, {
    ticket,
    tags: tagsOf(session.workspaceId, session.env, session.personId),
    changesAt: sources ? nextChangeOf(sources, services.clock.now()) : null,
  });
  return answerAccess(services, session, input.toolId, sources, credits, ticket);
}

/** The access check of a device session in hand (a device just activated). */
export async function checkAccess(services: Services, session: DeviceSession, toolId: string): Promise<Access> {
  const ticket = services.answers.ticket();
  const sources = (await loadSources(services.db, toolScope(session.workspaceId, session.env, session.toolId), [session.personId])).get(session.personId);
  return answerAccess(services, session, toolId, sources ?? null, await creditsOf(services, session), ticket);
}

/** A device's last signed token: what it says but its times, the key that signed it, its expiry (seconds). */
interface KeptToken {
  said: string;
  kid: string;
  token: string;
  exp: number;
}

const keptTokenKey = (tokenHash: string) => `access-token\u0000${tokenHash}`;

/**
 * The device's token for these claims: the one signed before while it says the same, was
 * signed by the key that signs now, and has more than half its life left; else a new one,
 * kept for the next checks. Signing was the largest part of a check answered from memory
 * (bench/README.md). Kept in the answer cache under the person's tags, so the access
 * changes that drop the person's answers drop it too; what it says is compared anyway, so
 * a claim that changed by itself (a trial that ended) is signed anew at once.
 */
async function tokenFor(
  services: Services,
  session: DeviceSession,
  said: Omit<AccessClaims, "iat" | "exp">,
  lifeSeconds: number,
  now: number,
  ticket: number,
): Promise<KeptToken> {
  const signer = await services.signingKeys.signer();
  const text = JSON.stringify(said);
  const key = keptTokenKey(session.tokenHash);
  const kept = services.answers.get<KeptToken>(key, false);
  if (kept && kept.said === text && kept.kid === signer.kid) return kept;
  const iat = Math.floor(now / 1000);
  const exp = iat + lifeSeconds;
  const made: KeptToken = { said: text, kid: signer.kid, token: signAccessToken(signer, { ...said, iat, exp }), exp };
  // Until half its life is gone (the cache's own bound may end it sooner).
  services.answers.set(key, made, { ticket, tags: tagsOf(session.workspaceId, session.env, session.personId), changesAt: (iat + lifeSeconds / 2) * 1000 });
  return made;
}

/** Whether the device's person holds the tool now, for how long the answer may be kept, and the answer signed. */
async function answerAccess(
  services: Services,
  session: DeviceSession,
  toolId: string,
  sources: Sources | null,
  credits: Credits,
  ticket: number,
): Promise<Access> {
  const { db, clock } = services;
  if (toolId !== session.toolId) throw notFound(`This device is signed in to tool "${session.toolId}", not "${toolId}".`);
  const now = clock.now();
  const own = sources ?? { licences: [], subscriptions: [], grants: [] };
  const entitlement = computeEntitlement(own, now);
  const { features } = heldTerms(own, await cachedToolTerms(services.answers, db, session.workspaceId, toolId), now);
  await touchDevice(db, session.deviceId, now);
  services.activity.note({
    workspaceId: session.workspaceId,
    env: session.env,
    toolId: session.toolId,
    personId: session.personId,
    deviceId: session.deviceId,
    at: now,
  });
  // Access that runs out by itself before the usual recheck is rechecked when it ends.
  const untilEnd = entitlement.entitled && entitlement.heldUntil !== null ? Math.ceil((entitlement.heldUntil - now) / 1000) : MAX_RECHECK_SECONDS;
  const recheckAfter = Math.max(1, Math.min(MAX_RECHECK_SECONDS, untilEnd));
  const subscription = entitlement.subscription;
  const { token, exp } = await tokenFor(
    services,
    session,
    {
      iss: TOKEN_ISSUER,
      aud: audienceOf(session.workspaceSlug, session.env),
      // A device activated with a licence key is not its holder signed in: it is named by itself, without the address.
      sub: session.licenceId === null ? session.personId : session.deviceId,
      email: session.licenceId === null ? session.email : null,
      workspace: session.workspaceSlug,
      env: session.env,
      tool: toolId,
      entitled: entitlement.entitled,
      via: entitlement.via,
      plan: entitlement.plan?.id ?? null,
      features,
      trial_ends_at: entitlement.trial ? Math.floor(entitlement.trial.endsAt / 1000) : null,
    },
    Math.min(recheckAfter, MAX_TOKEN_SECONDS),
    now,
    ticket,
  );
  const meaning = {
    entitled: entitlement.entitled,
    via: entitlement.via,
    plan: entitlement.plan,
    trial: entitlement.trial ? { endsAt: toIso(entitlement.trial.endsAt), active: entitlement.trial.active } : null,
    subscription: subscription
      ? {
          status: subscription.status,
          periodEnd: toIso(subscription.periodEnd),
          cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
          cancelAt: subscription.cancelAt === null ? null : toIso(subscription.cancelAt),
        }
      : null,
    features,
  };
  // The answer is kept no longer than its token lives: a token used again has less than its whole life left.
  const recheck = Math.max(1, Math.min(recheckAfter, exp - Math.floor(now / 1000)));
  return { ...meaning, state: stateOf(meaning, credits), recheck_after: recheck, token };
}

/**
 * The fingerprint of what an answer says, without its times or token: 64 bits of its
 * SHA-256, plenty to tell one person's answers apart. The plan counts by id (a renamed
 * plan is no new access). Features count when there are any, and the credits' version
 * when the person ever had credits of the tool: an answer without either keeps the state
 * it had before they existed, so devices of tools that declare none are not woken for
 * nothing. The credits' version moves when a pack is bought, refunded or disputed and
 * when credits are added or removed by hand, never when they are spent: a waiting device
 * learns of credits it can spend (its `usage()` then reads them).
 */
function stateOf(meaning: Omit<Access, "state" | "recheck_after" | "token">, credits: Credits): string {
  const said: unknown[] = [meaning.entitled, meaning.via, meaning.plan?.id ?? null, meaning.trial, meaning.subscription];
  if (meaning.features.length > 0) said.push(meaning.features);
  if (credits !== null && credits.rows > 0) said.push({ credits: [credits.rows, credits.held] });
  return sha256(JSON.stringify(said)).slice(0, 16);
}

/**
 * Answers the device's access as soon as it differs from the `state` the device holds,
 * or null once `waitSeconds` pass with no change (or the wait is ended: the client left,
 * the server closes, the database stopped answering). The device waits on the process's
 * access watch, which costs no query while nothing changes; a wake costs one access
 * check. A device signed out meanwhile gets its 401 at that check.
 */
export async function waitForAccessChange(
  services: Services,
  input: DeviceRequest & { toolId: string; state: string; waitSeconds: number; signal?: AbortSignal },
): Promise<Access | null> {
  const { accessWatch, clock, metrics } = services;
  const session = await authenticateDevice(services, input);
  if (input.toolId !== session.toolId) throw notFound(`This device is signed in to tool "${session.toolId}", not "${input.toolId}".`);
  const waiter = await accessWatch.open(
    { deviceId: session.deviceId, personId: session.personId, workspaceId: session.workspaceId, env: session.env },
    clock.now() + input.waitSeconds * 1000,
    input.signal,
  );
  try {
    for (;;) {
      const answer = await checkDeviceAccess(services, input);
      if (answer.state !== input.state) {
        metrics.countAccessWait("changed");
        return answer;
      }
      if ((await waiter.next()) !== "changed") {
        metrics.countAccessWait("unchanged");
        return null;
      }
    }
  } finally {
    accessWatch.close(waiter);
  }
}

/**
 * The person's signed-in devices; `currentDeviceId` is the asking device's (null for a web
 * session). A device activated with a licence key sees the devices of that licence only,
 * as it sees only that licence among the purchases: the key may be shared, the buyer's
 * other devices are not the key holder's business.
 */
export async function listDevices(services: Services, person: PersonScope, currentDeviceId: string | null) {
  const devices = await listSignedInDevices(services.db, person);
  return { data: devices.map((d) => deviceView(d, currentDeviceId)) };
}

/** Signs out one of the person's devices (the asking one included); its token stops working at once. */
export async function signOut(services: Services, person: PersonScope, deviceId: string) {
  const { db, clock } = services;
  const now = clock.now();
  const signedOut = await db.transaction().execute(async (trx) => {
    const toolId = await signOutDevice(trx, person, deviceId, now);
    if (toolId === null) return false;
    await syncCustomer(trx, toolScope(person.workspaceId, person.env, toolId), person.personId, now);
    return true;
  });
  if (!signedOut) throw notFound("No such signed-in device of yours.");
  return { id: deviceId, signed_out_at: toIso(now) };
}
