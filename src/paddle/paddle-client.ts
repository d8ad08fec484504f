// Paddle's API for one workspace environment, through the official `@paddle/paddle-node-sdk`
// for what Warden asks Paddle to do (a checkout's transaction, a price, cancel, resume, the
// customer portal, a refund), and a small fetch of the same API for the reconcile's lists,
// whose pages Warden reads as the raw JSON the webhooks carry, with their own reader
// (paddle-objects.ts): the SDK turns each entity into camelCase classes of its own, which
// would need a second reader of every field (docs/decisions.md, Payments: processors).
// WARDEN_PADDLE_API_URL points both elsewhere (tests: a stand-in): the SDK takes an
// address in place of its `environment` (its base URL is the environment's, else the
// value given), a use its types do not name, hence the cast.
import { ApiError, Environment, Paddle } from "@paddle/paddle-node-sdk";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findPaddleAccount } from "./paddle-account.store.js";

export interface PaddleApi {
  sdk: Paddle;
  baseUrl: string;
  apiKey: string;
}

/** The environment's Paddle API, or null when no API key is connected. */
export async function paddleApiFor(services: Services, scope: { workspaceId: string; env: Env }): Promise<PaddleApi | null> {
  const account = await findPaddleAccount(services.db, scope.workspaceId, scope.env);
  if (!account?.apiKeySealed) return null;
  const apiKey = services.secretBox.open(account.apiKeySealed);
  const environment = services.config.paddleApiUrl ?? (scope.env === "live" ? Environment.production : Environment.sandbox);
  const baseUrl = services.config.paddleApiUrl ?? (scope.env === "live" ? "https://api.paddle.com" : "https://sandbox-api.paddle.com");
  return { sdk: new Paddle(apiKey, { environment: environment as Environment }), baseUrl, apiKey };
}

const firstLine = (message: string) => message.split("\n")[0] ?? message;

/** Paddle refusing a request becomes invalid_parameter in Warden's words, Paddle's error kept as its cause. */
export const paddleRefused = (error: unknown) =>
  error instanceof ApiError && error.type === "request_error"
    ? Object.assign(invalidParameter("id", `Paddle refused: ${firstLine(error.detail)} (${error.code})`), { cause: error })
    : error;

/** Whether Paddle answered that the entity does not exist. */
export const isPaddleNotFound = (error: unknown) => error instanceof ApiError && error.code === "not_found";

/** One page of a Paddle list as Paddle sends it (`{data, meta: {pagination: {per_page, next, has_more, estimated_total}}}`). */
export interface PaddlePage {
  data: unknown[];
  /** The address of the next page (its `after` cursor), when `has_more`. */
  next: string | null;
}

/** Paddle's 429: how long it asks to wait (`Retry-After`, in seconds). */
export class PaddleRateLimited extends Error {
  constructor(readonly retryAfterMs: number) {
    super("Paddle answered 429 Too Many Requests");
  }
}

/** Reads one page of a list: `path` with its query, or the `next` address Paddle gave. */
export async function readPaddlePage(api: PaddleApi, pathOrNext: string): Promise<PaddlePage> {
  const url = new URL(pathOrNext, api.baseUrl);
  // Only ever the API's own address: a `next` naming another host would be given the key.
  if (url.origin !== new URL(api.baseUrl).origin) throw new Error(`Paddle's next page ${url.href} is not on ${api.baseUrl}`);
  const response = await fetch(url, { headers: { authorization: `Bearer ${api.apiKey}`, accept: "application/json" }, signal: AbortSignal.timeout(30_000) });
  if (response.status === 429) {
    const seconds = Number(response.headers.get("retry-after"));
    throw new PaddleRateLimited(Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 60) * 1000 : 1000);
  }
  const body = (await response.json()) as {
    data?: unknown;
    meta?: { pagination?: { next?: unknown; has_more?: unknown } };
    error?: { code?: unknown; detail?: unknown };
  };
  if (!response.ok) {
    const refusal = invalidParameter(
      "env",
      `Paddle refused: ${String(body.error?.detail ?? response.statusText)} (${String(body.error?.code ?? response.status)})`,
    );
    throw refusal;
  }
  const pagination = body.meta?.pagination;
  return {
    data: Array.isArray(body.data) ? body.data : [],
    next: pagination?.has_more === true && typeof pagination.next === "string" ? pagination.next : null,
  };
}
