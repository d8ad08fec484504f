// Who is asking, for every page behind sign-in: the session from its cookie (refused
// at once when ended, idle, expired or its owner suspended), the form token of the
// session, and the workspace and environment the address names, which must be the
// owner's own.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Env } from "../../db/schema.js";
import { originOf } from "../../http/request-origin.js";
import { authenticateOwnerSession, type OwnerSessionView } from "../../owners/owner-sign-in.service.js";
import type { RequestContext, Services } from "../../services.js";
import { listOwnedWorkspaces, listWorkspaceOwnerIds } from "../../workspaces/workspace.service.js";
import type { Workspace } from "../../workspaces/workspace.types.js";
import { parseCookies, serialiseCookie } from "./cookies.js";
import { type AccountSection, DASHBOARD, type Frame, type Section } from "./layout.js";
import { checkFormToken, cookieNames, csrfTokenFor, isSecure, PageRefusal } from "./security.js";

export interface SignedIn {
  session: OwnerSessionView;
  /** The session cookie's secret: the form token derives from it. */
  token: string;
  csrf: string;
}

const signedIn = new WeakMap<FastifyRequest, SignedIn>();

/** The session token a request's cookie carries, or null. */
export function sessionTokenOf(request: FastifyRequest): string | null {
  return parseCookies(request.headers.cookie).get(cookieNames(request).session) ?? null;
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("Set-Cookie", serialiseCookie(cookieNames(request).session, "", { secure: isSecure(request), maxAgeSeconds: 0 }));
}

/**
 * Every route of `app` needs a live session: without one, the browser is sent to sign in.
 * Forms are checked for the session's token once their body is parsed (preHandler):
 * a check any earlier would see no body, and refuse every real form.
 */
/** How long the page asked for before sign-in is remembered: a sign-in takes minutes (a code lives 10). */
const NEXT_COOKIE_SECONDS = 30 * 60;

/** A path of a dashboard page, and nothing that could leave it (`//host`, `/\\host`, a scheme). */
export function isDashboardPath(path: string): boolean {
  return path.startsWith(`${DASHBOARD}/`) && !path.startsWith(`${DASHBOARD}/sign-in`) && !/[\\]|\/\/|[\u0000-\u001f]/.test(path) && path.length <= 2048;
}

export function requireSession(app: FastifyInstance, services: Services): void {
  app.addHook("onRequest", async (request, reply) => {
    const token = sessionTokenOf(request);
    const session = token === null ? null : await authenticateOwnerSession(services, token, request.ip);
    if (token === null || session === null) {
      if (token !== null) clearSessionCookie(request, reply);
      // The page asked for is opened once signed in (a link from a mail, a bookmark). Kept
      // in a cookie, not the sign-in page's address, so it goes through both forms untouched
      // and is read back only by our own redirect, which accepts only a dashboard path.
      if (request.method === "GET" && isDashboardPath(request.url)) {
        reply.header(
          "Set-Cookie",
          serialiseCookie(cookieNames(request).next, encodeURIComponent(request.url), { secure: isSecure(request), maxAgeSeconds: NEXT_COOKIE_SECONDS }),
        );
      }
      return reply.redirect(`${DASHBOARD}/sign-in${token !== null ? "?expired=1" : ""}`, 303);
    }
    // The actor carries where this request came from, for the owners' notification mails.
    signedIn.set(request, { session: { ...session, actor: { ...session.actor, from: originOf(request) } }, token, csrf: csrfTokenFor(token) });
  });
  app.addHook("preHandler", async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    checkFormToken(request, signedInOf(request).token);
  });
}

export function signedInOf(request: FastifyRequest): SignedIn {
  const found = signedIn.get(request);
  if (!found) throw new Error("dashboard route reached without a session");
  return found;
}

/** A page about the owner (no workspace on screen). */
export async function ownerFrame(services: Services, request: FastifyRequest, section: Section): Promise<{ owner: SignedIn; frame: Frame }> {
  const owner = signedInOf(request);
  const workspaces = await listOwnedWorkspaces(services.db, owner.session.actor.ownerId);
  return { owner, frame: { email: owner.session.actor.email, csrf: owner.csrf, workspaces, current: null, section } };
}

/**
 * An account page's frame: with the workspace environment it was opened from
 * (`?workspace=&env=`, see `accountQuery`) when the owner owns it, else none; a workspace
 * that is not theirs is ignored as an unknown one, the page is about the owner either way.
 */
export async function accountFrame(services: Services, request: FastifyRequest, section: AccountSection): Promise<{ owner: SignedIn; frame: Frame }> {
  const { owner, frame } = await ownerFrame(services, request, section);
  const query = request.query as Record<string, unknown>;
  const workspace = frame.workspaces.find((w) => w.slug === query.workspace);
  const env = query.env === "test" || query.env === "live" ? query.env : null;
  return { owner, frame: { ...frame, current: workspace && env ? { workspace, env } : null } };
}

export interface WorkspacePage {
  owner: SignedIn;
  frame: Frame;
  workspace: Workspace;
  env: Env;
}

/**
 * A page of one workspace environment, from `/w/:workspace/:env/…`. A workspace the
 * owner does not own answers as one that does not exist.
 */
export async function workspacePage(services: Services, request: FastifyRequest, section: Exclude<Section, AccountSection>): Promise<WorkspacePage> {
  const { workspace: slug, env } = request.params as { workspace: string; env: string };
  const { owner, frame } = await ownerFrame(services, request, section);
  const workspace = frame.workspaces.find((w) => w.slug === slug);
  if (!workspace || (env !== "test" && env !== "live")) {
    throw new PageRefusal(404, "Not found", "You own no such workspace, or the address is mistyped. Pick a workspace from the list at the top.");
  }
  return { owner, frame: { ...frame, current: { workspace, env }, section }, workspace, env };
}

/**
 * The context under which a page calls the use cases the API calls: the workspace
 * environment on screen, and the owner as the actor, so that each change is audited.
 * No API key is involved, so there is no key request to count (a page's lookups and
 * rows read still count against the workspace's own limits, as the API's do).
 */
export async function contextOf(services: Services, page: WorkspacePage): Promise<RequestContext> {
  const { workspace, env, owner } = page;
  const ownerIds = await listWorkspaceOwnerIds(services.db, workspace.id);
  return {
    services,
    principal: {
      keyId: `owner-session:${owner.session.actor.ownerId}`,
      workspaceId: workspace.id,
      workspaceSlug: workspace.slug,
      plan: workspace.plan,
      env,
      ownerIds,
      keyRequestCounted: true,
    },
    actor: owner.session.actor,
  };
}

const WORKSPACE_SECTIONS: readonly Exclude<Section, AccountSection>[] = [
  "customers",
  "tools",
  "bundles",
  "stripe",
  "keys",
  "webhooks",
  "events",
  "owners",
  "branding",
  "audit",
];

/**
 * The signed-in frame of an error page, or null when no owner is signed in (or the
 * database that would say so is away): the navigation stays, so a mistyped address or a
 * refused form is one click from where the owner was. The workspace on screen is the
 * address's only when the owner owns it; any other answers as one that does not exist
 * (the same page either way, so it tells nothing of other workspaces).
 */
export async function errorPageFrame(services: Services, request: FastifyRequest): Promise<Frame | null> {
  try {
    let owner = signedIn.get(request);
    if (!owner) {
      const token = sessionTokenOf(request);
      const session = token === null ? null : await authenticateOwnerSession(services, token, request.ip);
      if (token === null || session === null) return null;
      owner = { session, token, csrf: csrfTokenFor(token) };
    }
    const workspaces = await listOwnedWorkspaces(services.db, owner.session.actor.ownerId);
    const path = request.url.split("?")[0] ?? "";
    const match = /^\/dashboard\/w\/([^/]+)\/(test|live)(?:\/([^/]+))?/.exec(path);
    const slug = match?.[1] === undefined ? null : safeDecode(match[1]);
    const workspace = slug === null ? undefined : workspaces.find((w) => w.slug === slug);
    const env = match?.[2] === "live" ? "live" : "test";
    const section = WORKSPACE_SECTIONS.find((s) => s === match?.[3]) ?? "overview";
    return {
      email: owner.session.actor.email,
      csrf: owner.csrf,
      workspaces,
      current: workspace ? { workspace, env } : null,
      section: workspace ? section : "overview",
    };
  } catch (error) {
    // The error page is shown whatever failed here, in its signed-out form.
    request.log.warn({ err: error }, "error page without navigation");
    return null;
  }
}

function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
