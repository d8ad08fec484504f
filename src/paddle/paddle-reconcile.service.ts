// `warden admin paddle reconcile`: what Paddle's notifications missed (a Warden that was
// down longer than Paddle retries, a destination added late), read from Paddle's API and
// applied as the notifications would have been. Subscriptions, completed transactions and
// adjustments are listed page by page (`after` cursors, Paddle's `next`), each object read
// by the webhooks' own reader as the event that reports it and applied through
// `applyPaddleEvent`, the ingest's code: the price paid is checked the same way, and the
// same fact derives the same Warden event id, so what a delivery sent is not sent again
// and a second run sends nothing. Subscriptions come first, so that their payments and
// refunds find them stored.
import { inBillingTransaction } from "../billing/billing.context.js";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import { isObj, str } from "../payments/fields.js";
import type { Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { listPaddleScopesWithApiKey } from "./paddle-account.store.js";
import { PaddleRateLimited, paddleApiFor, readPaddlePage } from "./paddle-client.js";
import { applyPaddleEvent } from "./paddle-ingest.service.js";
import { readPaddleEvent } from "./paddle-objects.js";

/** Paddle's largest page. */
const PER_PAGE = 200;
/** A 429 is waited out this many times per page before the run fails. */
const RATE_LIMIT_ATTEMPTS = 8;

type Kind = "subscription" | "transaction" | "adjustment";

/** Each list, and the event type an object of it is read as. */
const LISTS: { kind: Kind; path: string; typeOf: (o: Record<string, unknown>) => string }[] = [
  { kind: "subscription", path: "/subscriptions", typeOf: (o) => (o.status === "canceled" ? "subscription.canceled" : "subscription.updated") },
  { kind: "transaction", path: "/transactions?status=completed", typeOf: () => "transaction.completed" },
  { kind: "adjustment", path: "/adjustments", typeOf: () => "adjustment.updated" },
];

export interface PaddleReconcileResult {
  workspace: string;
  env: Env;
  /** Objects read, per kind. */
  read: Record<Kind, number>;
  /** Objects applied (already applied ones change nothing: their facts derive the same ids). */
  applied: number;
  /** What Warden did not take, and why (no Warden custom_data, a price not linked to the plan named, …). */
  ignored: { kind: Kind; id: string; reason: string }[];
}

export interface PaddleReconcileOptions {
  /** Waits out a 429; tests pass one that moves their clock instead of sleeping. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function reconcilePaddle(
  services: Services,
  input: { workspace: string; env: string },
  options: PaddleReconcileOptions = {},
): Promise<PaddleReconcileResult> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const scope = { workspaceId: workspace.id, env };
  const api = await paddleApiFor(services, scope);
  if (!api) throw invalidParameter("env", `Reconciling needs Paddle's API key for ${env} (warden admin paddle connect … --api-key).`);
  const sleep = options.sleep ?? realSleep;
  const result: PaddleReconcileResult = { workspace: workspace.slug, env, read: { subscription: 0, transaction: 0, adjustment: 0 }, applied: 0, ignored: [] };
  for (const list of LISTS) {
    let next: string | null = `${list.path}${list.path.includes("?") ? "&" : "?"}per_page=${PER_PAGE}`;
    while (next !== null) {
      const page = await pageWaitingOutLimits(() => readPaddlePage(api, next as string), sleep);
      for (const object of page.data) {
        if (!isObj(object)) continue;
        result.read[list.kind]++;
        const id = str(object, "id") ?? "?";
        // The object as the notification that reports it: dated by Paddle's own time of it.
        const at = str(object, "billed_at") ?? str(object, "updated_at") ?? str(object, "created_at");
        const event = readPaddleEvent({ event_id: `reconcile_${id}`, event_type: list.typeOf(object), occurred_at: at, data: object });
        if ("problem" in event) {
          result.ignored.push({ kind: list.kind, id, reason: event.problem });
          continue;
        }
        const handled = await inBillingTransaction(services, scope, (tx) => applyPaddleEvent(tx, event));
        if (handled.outcome === "applied") result.applied++;
        else result.ignored.push({ kind: list.kind, id, reason: handled.reason ?? "no signed-in buyer (warden_account in custom_data)" });
      }
      next = page.next;
    }
  }
  return result;
}

/**
 * One scheduled round (`warden serve`, WARDEN_PADDLE_RECONCILE_MINUTES): every environment
 * with a Paddle API key, one after the other; one environment's failure (a key revoked at
 * Paddle) is answered as its error, and the others still run.
 */
export async function reconcilePaddleScheduled(
  services: Services,
  options: PaddleReconcileOptions = {},
): Promise<(PaddleReconcileResult | { workspace: string; env: Env; error: unknown })[]> {
  const results: (PaddleReconcileResult | { workspace: string; env: Env; error: unknown })[] = [];
  for (const scope of await listPaddleScopesWithApiKey(services.db)) {
    results.push(
      await reconcilePaddle(services, { workspace: scope.slug, env: scope.env }, options).catch((error: unknown) => ({
        workspace: scope.slug,
        env: scope.env,
        error,
      })),
    );
  }
  return results;
}

async function pageWaitingOutLimits<T>(read: () => Promise<T>, sleep: (ms: number) => Promise<void>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof PaddleRateLimited) || attempt >= RATE_LIMIT_ATTEMPTS) throw error;
      await sleep(error.retryAfterMs);
    }
  }
}
