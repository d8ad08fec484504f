import type { Executor } from "../db/database.js";
import type { Env, ReconcileStatus, ReconcileTrigger, StripeReconcileRunsTable } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

export interface ReconcileRun {
  id: string;
  workspaceId: string;
  env: Env;
  trigger: ReconcileTrigger;
  dryRun: boolean;
  since: number | null;
  status: ReconcileStatus;
  scanned: number;
  applied: number;
  unmapped: number;
  /** JSON text of what the run found (stripe-reconcile.service.ts reads it). */
  report: string | null;
  error: string | null;
  startedAt: number;
  finishedAt: number | null;
}

/**
 * Takes the workspace environment's reconcile for `runId` until `expiresAt`: false while
 * another run holds an unexpired lease. The database decides, so two processes (two
 * `warden serve`, or one and the CLI) never reconcile the same environment at once.
 */
export async function takeReconcileLease(ex: Executor, scope: Scope, runId: string, now: number, expiresAt: number): Promise<boolean> {
  const taken = await ex
    .insertInto("stripe_reconcile_leases")
    .values({ workspace_id: scope.workspaceId, env: scope.env, run_id: runId, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .columns(["workspace_id", "env"])
        .doUpdateSet({ run_id: runId, expires_at: expiresAt })
        .where((eb) => eb.or([eb("stripe_reconcile_leases.expires_at", "<=", now), eb("stripe_reconcile_leases.run_id", "=", runId)])),
    )
    .returning("run_id")
    .executeTakeFirst();
  return taken !== undefined;
}

export async function releaseReconcileLease(ex: Executor, scope: Scope, runId: string): Promise<void> {
  await ex
    .deleteFrom("stripe_reconcile_leases")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("run_id", "=", runId)
    .execute();
}

export async function insertReconcileRun(ex: Executor, run: ReconcileRun): Promise<void> {
  await ex
    .insertInto("stripe_reconcile_runs")
    .values({
      id: run.id,
      workspace_id: run.workspaceId,
      env: run.env,
      trigger: run.trigger,
      dry_run: run.dryRun ? 1 : 0,
      since: run.since,
      status: run.status,
      scanned: run.scanned,
      applied: run.applied,
      unmapped: run.unmapped,
      report: run.report,
      error: run.error,
      started_at: run.startedAt,
      finished_at: run.finishedAt,
    })
    .execute();
}

/**
 * Runs of the environment still marked running when a new one takes the lease: their
 * process stopped before they ended (the lease ran out), so they are marked failed.
 */
export async function failAbandonedRuns(ex: Executor, scope: Scope, now: number): Promise<void> {
  await ex
    .updateTable("stripe_reconcile_runs")
    .set({ status: "failed", error: "its process stopped before it ended; what it had applied stays", finished_at: now })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("status", "=", "running")
    .execute();
}

/**
 * Keeps the environment's newest `keep` runs: a scheduled run every few minutes would
 * otherwise grow the table without end, and the page shows the last few.
 */
export async function pruneReconcileRuns(ex: Executor, scope: Scope, keep: number): Promise<void> {
  const kept = await ex
    .selectFrom("stripe_reconcile_runs")
    .select("started_at")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("started_at", "desc")
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  if (!kept) return;
  await ex
    .deleteFrom("stripe_reconcile_runs")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("started_at", "<", Number(kept.started_at))
    .execute();
}

export async function updateReconcileRun(
  ex: Executor,
  id: string,
  patch: Partial<Pick<ReconcileRun, "status" | "scanned" | "applied" | "unmapped" | "report" | "error" | "finishedAt">>,
): Promise<void> {
  await ex
    .updateTable("stripe_reconcile_runs")
    .set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.scanned !== undefined ? { scanned: patch.scanned } : {}),
      ...(patch.applied !== undefined ? { applied: patch.applied } : {}),
      ...(patch.unmapped !== undefined ? { unmapped: patch.unmapped } : {}),
      ...(patch.report !== undefined ? { report: patch.report } : {}),
      ...(patch.error !== undefined ? { error: patch.error } : {}),
      ...(patch.finishedAt !== undefined ? { finished_at: patch.finishedAt } : {}),
    })
    .where("id", "=", id)
    .execute();
}

const toRun = (r: StripeReconcileRunsTable): ReconcileRun => ({
  id: r.id,
  workspaceId: r.workspace_id,
  env: r.env,
  trigger: r.trigger,
  dryRun: Number(r.dry_run) === 1,
  since: r.since === null ? null : Number(r.since),
  status: r.status,
  scanned: Number(r.scanned),
  applied: Number(r.applied),
  unmapped: Number(r.unmapped),
  report: r.report,
  error: r.error,
  startedAt: Number(r.started_at),
  finishedAt: r.finished_at === null ? null : Number(r.finished_at),
});

export async function findReconcileRun(ex: Executor, scope: Scope, id: string): Promise<ReconcileRun | null> {
  const r = await ex
    .selectFrom("stripe_reconcile_runs")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .executeTakeFirst();
  return r ? toRun(r) : null;
}

/** The environment's newest runs, newest first. */
export async function listReconcileRuns(ex: Executor, scope: Scope, limit: number): Promise<ReconcileRun[]> {
  const rows = await ex
    .selectFrom("stripe_reconcile_runs")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toRun);
}

/** When the newest finished scheduled run that applied for real began: the next one reads from a little before it. */
export async function findLastScheduledStart(ex: Executor, scope: Scope): Promise<number | null> {
  const r = await ex
    .selectFrom("stripe_reconcile_runs")
    .select("started_at")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("trigger", "=", "schedule")
    .where("status", "=", "done")
    .orderBy("started_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return r ? Number(r.started_at) : null;
}

/** The workspace environments with a secret key: the ones a scheduled reconcile can read Stripe for. */
export async function listReconcilableScopes(ex: Executor): Promise<(Scope & { slug: string })[]> {
  const rows = await ex
    .selectFrom("stripe_accounts")
    .innerJoin("workspaces", "workspaces.id", "stripe_accounts.workspace_id")
    .select(["stripe_accounts.workspace_id", "stripe_accounts.env", "workspaces.slug"])
    .where("stripe_accounts.secret_key_sealed", "is not", null)
    .orderBy("stripe_accounts.workspace_id")
    .orderBy("stripe_accounts.env")
    .execute();
  return rows.map((r) => ({ workspaceId: r.workspace_id, env: r.env, slug: r.slug }));
}

/** Events written in the environment at this instant: what one applied fact sent (the reconcile reports them). */
export async function listEventsWrittenAt(ex: Executor, scope: Scope, at: number): Promise<{ id: string; type: string }[]> {
  return ex
    .selectFrom("events")
    .select(["id", "type"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("created_at", "=", at)
    .execute();
}
