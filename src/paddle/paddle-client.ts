// Paddle's API for one workspace environment, through the official `@paddle/paddle-node-sdk`
// (a checkout's transaction, a price, cancel, resume, the customer portal, a refund).
// WARDEN_PADDLE_API_URL points it elsewhere (tests: a stand-in): the SDK takes an address
// in place of its `environment` (its base URL is the environment's, else the value
// given), a use its types do not name, hence the cast.
import { ApiError, Environment, Paddle } from "@paddle/paddle-node-sdk";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findPaddleAccount } from "./paddle-account.store.js";

export interface PaddleApi {
  sdk: Paddle;
}

/** The environment's Paddle API, or null when no API key is connected. */
export async function paddleApiFor(services: Services, scope: { workspaceId: string; env: Env }): Promise<PaddleApi | null> {
  const account = await findPaddleAccount(services.db, scope.workspaceId, scope.env);
  if (!account?.apiKeySealed) return null;
  const apiKey = services.secretBox.open(account.apiKeySealed);
  const environment = services.config.paddleApiUrl ?? (scope.env === "live" ? Environment.production : Environment.sandbox);
  return { sdk: new Paddle(apiKey, { environment: environment as Environment }) };
}

const firstLine = (message: string) => message.split("\n")[0] ?? message;

/** Paddle refusing a request becomes invalid_parameter in Warden's words, Paddle's error kept as its cause. */
export const paddleRefused = (error: unknown) =>
  error instanceof ApiError && error.type === "request_error"
    ? Object.assign(invalidParameter("id", `Paddle refused: ${firstLine(error.detail)} (${error.code})`), { cause: error })
    : error;

/** Whether Paddle answered that the entity does not exist. */
export const isPaddleNotFound = (error: unknown) => error instanceof ApiError && error.code === "not_found";
