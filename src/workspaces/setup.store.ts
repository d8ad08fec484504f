import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ALL_TOOLS } from "../insights/rollup.store.js";
import { TEST_PURCHASE_EVENT } from "../stripe/test-purchase.types.js";

/** Which of the setup steps a workspace environment has taken: one statement of eight index probes. */
export async function setupFacts(
  ex: Executor,
  workspaceId: string,
  env: Env,
): Promise<{
  plan: boolean;
  stripe: boolean;
  stripeEvent: boolean;
  paddle: boolean;
  paddleEvent: boolean;
  endpoint: boolean;
  liveKey: boolean;
  accessCheck: boolean;
}> {
  const row = await ex
    .selectNoFrom((eb) => [
      eb.exists(eb.selectFrom("plans").select("id").where("workspace_id", "=", workspaceId).where("retired_at", "is", null)).as("plan"),
      eb.exists(eb.selectFrom("stripe_accounts").select("env").where("workspace_id", "=", workspaceId).where("env", "=", env)).as("stripe"),
      // Stripe's own events: a test purchase sent from the command line proves nothing of Stripe reaching Warden.
      eb
        .exists(
          eb
            .selectFrom("stripe_events")
            .select("id")
            .where("workspace_id", "=", workspaceId)
            .where("env", "=", env)
            .where(sql`substr(id, 1, ${TEST_PURCHASE_EVENT.length})`, "<>", TEST_PURCHASE_EVENT),
        )
        .as("stripe_event"),
      eb.exists(eb.selectFrom("paddle_accounts").select("env").where("workspace_id", "=", workspaceId).where("env", "=", env)).as("paddle"),
      // Paddle's events are only ever Paddle's: its ingest takes nothing sent from the command line.
      eb.exists(eb.selectFrom("paddle_events").select("id").where("workspace_id", "=", workspaceId).where("env", "=", env)).as("paddle_event"),
      eb
        .exists(eb.selectFrom("webhook_endpoints").select("id").where("workspace_id", "=", workspaceId).where("env", "=", env).where("removed_at", "is", null))
        .as("endpoint"),
      eb
        .exists(eb.selectFrom("api_keys").select("id").where("workspace_id", "=", workspaceId).where("env", "=", "live").where("revoked_at", "is", null))
        .as("live_key"),
      // A person's first active day writes their row under "*": the first access check there is, once its second's flush ran.
      eb
        .exists(
          eb
            .selectFrom("insight_last_active")
            .select("person_id")
            .where("workspace_id", "=", workspaceId)
            .where("env", "=", env)
            .where("scope", "=", ALL_TOOLS),
        )
        .as("access_check"),
    ])
    .executeTakeFirstOrThrow();
  const yes = (v: unknown) => v === true || Number(v) === 1;
  return {
    plan: yes(row.plan),
    stripe: yes(row.stripe),
    stripeEvent: yes(row.stripe_event),
    paddle: yes(row.paddle),
    paddleEvent: yes(row.paddle_event),
    endpoint: yes(row.endpoint),
    liveKey: yes(row.live_key),
    accessCheck: yes(row.access_check),
  };
}
