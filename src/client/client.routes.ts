import cors from "@fastify/cors";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { exchangeHandOffCode, issuePageTicket } from "../customer-pages/hand-off.service.js";
import { commonErrors, ToolParams } from "../http/common.schema.js";
import { CheckoutBody, CreatedCheckout } from "../payments/checkout.schema.js";
import { createCheckout } from "../payments/checkout.service.js";
import type { Services } from "../services.js";
import { activateLicence } from "./activation.service.js";
import {
  Access,
  AccessChangesQuery,
  ActivateBody,
  ActivatedSession,
  AssignSeatBody,
  DeviceList,
  DeviceParams,
  ExchangeBody,
  PageTicket,
  Purchase,
  PurchaseList,
  PurchaseParams,
  SeatChange,
  SeatList,
  SeatParams,
  Session,
  SignedOut,
  SignInBody,
  SignInSent,
  SubscriptionParams,
  VerifyBody,
} from "./client.schema.js";
import { authenticateDevice, checkDeviceAccess, listDevices, requestSignIn, signOut, verifySignIn, waitForAccessChange } from "./client.service.js";
import { isAllowedClientOrigin } from "./cors.js";
import { assignTeamSeat, changeOwnSubscription, listPurchases, listTeamSeats, unassignTeamSeat } from "./purchase.service.js";
import { startTrial } from "./trial.service.js";

const DEVICE_AUTH = "Authenticated by the device token: Authorization: Bearer wdt_…";
const SIGNED_IN_AUTH = "Authenticated by the device token of a sign-in (a device activated with a licence key cannot): Authorization: Bearer wdt_…";
const withPlanLimit = { 403: { $ref: "Error" }, ...commonErrors };

/**
 * The client API under /api/client/v1: what a browser extension calls. Sign-in takes no
 * credential; every other route takes the device token from a verified sign-in.
 */
export const clientRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // Extension origins, and the web origins the operator lists; for these routes only.
  await app.register(cors, {
    origin: (origin, callback) => callback(null, isAllowedClientOrigin(origin, services.config.clientOrigins)),
    methods: ["GET", "POST", "DELETE"],
    allowedHeaders: ["Authorization", "Content-Type"],
    exposedHeaders: ["Request-Id", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
    credentials: false,
    maxAge: 600,
    // An OPTIONS without Access-Control-Request-Method is not a preflight; the plugin's
    // strict mode answered it in plain text, outside the error shape. Browsers always
    // send the header, so answering it as one changes nothing for them.
    strictPreflight: false,
  });
  const session = (request: FastifyRequest) =>
    authenticateDevice(services, { hostname: request.hostname, source: request.ip, authorization: request.headers.authorization });

  app.post(
    "/sign-in",
    {
      schema: {
        operationId: "clientSignIn",
        summary: "Ask for a sign-in code",
        description:
          "Mails a 6-digit code to the address, valid once for 10 minutes; a newer code replaces an older one. Rate limited per address and per source address.",
        tags: ["Client"],
        security: [],
        body: SignInBody,
        response: { 200: SignInSent, ...commonErrors },
      },
    },
    async (request) => requestSignIn(services, { hostname: request.hostname, source: request.ip, body: request.body }),
  );

  app.post(
    "/sign-in/verify",
    {
      schema: {
        operationId: "clientVerifySignIn",
        summary: "Verify a sign-in code",
        description:
          "Signs the address in on a new device and answers the device's session token. 5 wrong codes void the code. Licences bought and grants made under the address apply at once.",
        tags: ["Client"],
        security: [],
        body: VerifyBody,
        response: { 200: Session, ...commonErrors },
      },
    },
    async (request) => verifySignIn(services, { hostname: request.hostname, body: request.body }),
  );

  app.post(
    "/tools/:tool/sign-in/exchange",
    {
      schema: {
        operationId: "clientExchangeSignIn",
        summary: "Exchange a hosted sign-in's code",
        description:
          "The hosted sign-in page (/c/{workspace}/{env}/{tool}/sign-in, opened with redirect_uri, state, code_challenge and code_challenge_method=S256) sends the signed-in person back to the extension's redirect with #code=…&state=…. This exchanges that code, with the PKCE verifier, for a new device session, answered as verify answers it. The code works once (the first attempt spends it, right or wrong), for 60 seconds, for its workspace, environment and tool only.",
        tags: ["Client"],
        security: [],
        params: ToolParams,
        body: ExchangeBody,
        response: { 200: Session, ...commonErrors },
      },
    },
    async (request) => exchangeHandOffCode(services, { hostname: request.hostname, toolId: request.params.tool, body: request.body }),
  );

  app.post(
    "/tools/:tool/page-tickets",
    {
      schema: {
        operationId: "clientCreatePageTicket",
        summary: "Open a hosted page signed in",
        description: `A one-time ticket for the hosted pages of the device's workspace, environment and tool (/c/{workspace}/{env}/{tool}/plans, …/trial, …/manage): the page opened with ?ticket=… is the device's person's (a key-activated device: for its licence only, without an address): a browser signed in there as that person goes straight on, any other is asked "Continue as …?" and signed in only if the person continues. Works once, for 60 seconds. At most ${services.limits.pageTicketsPerDevicePerMin} a minute per device (429 with Retry-After beyond; another device is not affected). ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        response: { 200: PageTicket, ...commonErrors },
      },
    },
    async (request) => issuePageTicket(services, await session(request), request.params.tool),
  );

  app.get(
    "/tools/:tool/access",
    {
      schema: {
        operationId: "clientCheckAccess",
        summary: "Check access",
        description: `Whether the signed-in person holds the tool now, and how, with the answer signed (token: a JWT to verify against /.well-known/jwks.json, expiring with the answer). Keep the answer at most recheck_after seconds (never more than 900). ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        response: { 200: Access, ...commonErrors },
      },
    },
    async (request, reply) => {
      const answer = await checkDeviceAccess(services, {
        hostname: request.hostname,
        source: request.ip,
        authorization: request.headers.authorization,
        toolId: request.params.tool,
      });
      reply.header("Cache-Control", `private, max-age=${answer.recheck_after}`);
      return answer;
    },
  );

  app.get(
    "/tools/:tool/access/changes",
    {
      schema: {
        operationId: "clientWaitForAccessChange",
        summary: "Wait for an access change",
        description: `A long poll: answers the access check (200, as GET /tools/{tool}/access) as soon as it differs from the state the device holds (a purchase, a trial, a seat, a grant, a revocation), within about a second of the change, or 204 when wait seconds pass with none. One wait per device at a time (429 with Retry-After otherwise, and when the server holds as many waits as it may). ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        querystring: AccessChangesQuery,
        response: { 200: Access, 204: Type.Null({ description: "No change within the wait: ask again, or check access as usual" }), ...commonErrors },
      },
    },
    async (request, reply) => {
      // The client gone (a closed popup, a stopped service worker) ends its wait and frees its place.
      const left = new AbortController();
      reply.raw.on("close", () => left.abort());
      const answer = await waitForAccessChange(services, {
        hostname: request.hostname,
        source: request.ip,
        authorization: request.headers.authorization,
        toolId: request.params.tool,
        state: request.query.state,
        waitSeconds: request.query.wait ?? 25,
        signal: left.signal,
      });
      reply.header("Cache-Control", "no-store");
      if (answer === null) return reply.code(204).send(null);
      return answer;
    },
  );

  app.get(
    "/devices",
    {
      schema: {
        operationId: "clientListDevices",
        summary: "List my devices",
        description: `The devices signed in to the workspace under this person. ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        response: { 200: DeviceList, ...commonErrors },
      },
    },
    async (request) => {
      const device = await session(request);
      return listDevices(services, device, device.deviceId);
    },
  );

  app.delete(
    "/devices/:id",
    {
      schema: {
        operationId: "clientSignOutDevice",
        summary: "Sign a device out",
        description: `Signs out one of this person's devices (this one included); its token stops working at once. ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: DeviceParams,
        response: { 200: SignedOut, ...commonErrors },
      },
    },
    async (request) => signOut(services, await session(request), request.params.id),
  );

  app.post(
    "/tools/:tool/trial",
    {
      schema: {
        operationId: "clientStartTrial",
        summary: "Start the tool's trial",
        description: `Starts the trial the tool offers, once per person (every spelling of a Gmail address is one person): 201 with the trial, a grant of kind trial. While it runs, asking again answers it with 200; after it ended, 400. ${SIGNED_IN_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        response: { 200: { $ref: "Grant" }, 201: { $ref: "Grant" }, ...withPlanLimit },
      },
    },
    async (request, reply) => {
      const result = await startTrial(services, await session(request), request.params.tool);
      return reply.code(result.created ? 201 : 200).send(result.grant);
    },
  );

  app.post(
    "/tools/:tool/activate",
    {
      schema: {
        operationId: "clientActivateLicence",
        summary: "Activate a licence key on a device",
        description: `Registers a device with a licence key instead of a sign-in and answers its session token, as verify does, with the device's first access check (access, its signed token included). At most ${services.limits.devicesPerLicence} devices per licence at once (403 plan_limit_error beyond; signing one out frees its place). Wrong keys count against the source address like wrong API keys.`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        body: ActivateBody,
        response: { 200: ActivatedSession, ...withPlanLimit },
      },
    },
    async (request) => activateLicence(services, { hostname: request.hostname, source: request.ip, toolId: request.params.tool, body: request.body }),
  );

  app.get(
    "/purchases",
    {
      schema: {
        operationId: "clientListPurchases",
        summary: "List my purchases",
        description: `The person's licences (with the key that activates a device), seats handed to them, and subscriptions, newest first. A device activated with a licence key sees that licence only. ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        response: { 200: PurchaseList, ...commonErrors },
      },
    },
    async (request) => listPurchases(services, await session(request)),
  );

  app.get(
    "/purchases/:id/seats",
    {
      schema: {
        operationId: "clientListSeats",
        summary: "List a team purchase's seats",
        description: `The seats handed out from a team licence or team subscription the person bought, oldest first. Only its buyer may. ${SIGNED_IN_AUTH}`,
        tags: ["Client"],
        security: [],
        params: PurchaseParams,
        response: { 200: SeatList, ...commonErrors },
      },
    },
    async (request) => listTeamSeats(services, await session(request), request.params.id),
  );

  app.post(
    "/purchases/:id/seats",
    {
      schema: {
        operationId: "clientAssignSeat",
        summary: "Hand out a seat",
        description: `Gives a seat of the team purchase to an address: a licence of their own that follows the team's. Never more than bought (400 when all are in use); the same address again answers its seat. Only the buyer may. ${SIGNED_IN_AUTH}`,
        tags: ["Client"],
        security: [],
        params: PurchaseParams,
        body: AssignSeatBody,
        response: { 200: SeatChange, ...withPlanLimit },
      },
    },
    async (request) => assignTeamSeat(services, await session(request), request.params.id, request.body.email),
  );

  app.delete(
    "/purchases/:id/seats/:seat",
    {
      schema: {
        operationId: "clientUnassignSeat",
        summary: "Take a seat back",
        description: `Revokes the seat's licence (its holder loses access at their next check) and frees the seat. Only the buyer may. ${SIGNED_IN_AUTH}`,
        tags: ["Client"],
        security: [],
        params: SeatParams,
        response: { 200: SeatChange, ...commonErrors },
      },
    },
    async (request) => unassignTeamSeat(services, await session(request), request.params.id, request.params.seat),
  );

  for (const [action, cancel] of [
    ["cancel", true],
    ["resume", false],
  ] as const) {
    app.post(
      `/subscriptions/:id/${action}`,
      {
        schema: {
          operationId: cancel ? "clientCancelSubscription" : "clientResumeSubscription",
          summary: cancel ? "Cancel my subscription at its period's end" : "Take back my subscription's cancellation",
          description: cancel
            ? `Sets the person's subscription to end at its period's end, at the payment processor (Stripe or Paddle) of the workspace environment first (subscription.cancelled, immediately false, is sent); access runs until then. Answers the subscription as GET /purchases lists it; asking again changes nothing. 400 when it ended, or when the processor cannot be asked (no Stripe secret key, or no Paddle API key, connected) or does not bill it: then the vendor handles it. Only its buyer may; any other id is 404. ${SIGNED_IN_AUTH}`
            : `Undoes a cancellation at the period's end, at the payment processor (Stripe or Paddle) of the workspace environment first (at Paddle, its scheduled cancellation is removed): the subscription renews again (no event is sent, as for the processor's own report of it). Answers the subscription as GET /purchases lists it; asking again changes nothing. 400 when it ended, when the vendor set its end date, or when the processor cannot be asked (no Stripe secret key, or no Paddle API key, connected) or does not bill it. Only its buyer may; any other id is 404. ${SIGNED_IN_AUTH}`,
          tags: ["Client"],
          security: [],
          params: SubscriptionParams,
          response: { 200: Purchase, ...commonErrors },
        },
      },
      async (request) => changeOwnSubscription(services, await session(request), request.params.id, cancel),
    );
  }

  app.post(
    "/tools/:tool/checkout",
    {
      schema: {
        operationId: "clientCreateCheckout",
        summary: "Create a checkout for the buy button",
        description:
          "Answers a checkout page at the payment processor (Stripe or Paddle) of the workspace environment (livemode) for one of the tool's plans (seats for a team purchase): a Stripe Checkout made with the environment's Stripe secret key, or Paddle's hosted checkout of the plan's linked Paddle price (active, in the plan's currency, billed as the plan is) made with its Paddle API key, checkout_session then being Paddle's transaction id. 400 payments_off when the processor has no such key. Signed out, the purchase attaches to whoever later verifies the address; with a device token (Authorization: Bearer wdt_…) it is the signed-in person's.",
        tags: ["Client"],
        security: [],
        params: ToolParams,
        body: CheckoutBody,
        response: { 200: CreatedCheckout, ...commonErrors },
      },
    },
    async (request) =>
      createCheckout(services, {
        hostname: request.hostname,
        toolId: request.params.tool,
        body: request.body,
        buyer: request.headers.authorization === undefined ? null : await session(request),
      }),
  );
};
