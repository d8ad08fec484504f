import { utcDayOf } from "../clock.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { bump, settleTrialOutcomes } from "../insights/rollup.store.js";

export interface StoredGrant {
  id: string;
  toolId: string;
  personId: string;
  email: string;
  kind: "grant" | "trial";
  startsAt: number;
  endsAt: number | null;
  revokedAt: number | null;
  note: string | null;
  createdAt: number;
  /** The tool's plan whose terms it gives; null: the tool's top terms (every feature). */
  planId: string | null;
}

/** A grant to write; one naming no plan may leave `planId` out. */
type NewGrant = Omit<StoredGrant, "email" | "planId"> & { planId?: string | null; workspaceId: string; env: Env };

export async function insertGrant(ex: Executor, grant: NewGrant): Promise<void> {
  await insertGrants(ex, [grant]);
}

/** Several grants and trials in one statement. */
export async function insertGrants(ex: Executor, grants: readonly NewGrant[]): Promise<void> {
  if (grants.length === 0) return;
  await ex
    .insertInto("grants")
    .values(
      grants.map((grant) => ({
        id: grant.id,
        workspace_id: grant.workspaceId,
        env: grant.env,
        tool_id: grant.toolId,
        person_id: grant.personId,
        kind: grant.kind,
        starts_at: grant.startsAt,
        ends_at: grant.endsAt,
        revoked_at: grant.revokedAt,
        note: grant.note,
        created_at: grant.createdAt,
        plan_id: grant.planId ?? null,
      })),
    )
    .execute();
  await bump(
    ex,
    grants.map((g) => ({
      workspaceId: g.workspaceId,
      env: g.env,
      metric: g.kind === "trial" ? ("trials" as const) : ("grants" as const),
      day: utcDayOf(g.createdAt),
      scope: `tool:${g.toolId}`,
      value: 1,
    })),
  );
  // A trial may start after its person bought (an import, a trial started back in time).
  await settleTrialOutcomes(
    ex,
    grants.filter((g) => g.kind === "trial"),
  );
}

function grantQuery(ex: Executor) {
  return ex
    .selectFrom("grants as g")
    .innerJoin("people as p", "p.id", "g.person_id")
    .select(["g.id", "g.tool_id", "g.person_id", "p.email", "g.kind", "g.starts_at", "g.ends_at", "g.revoked_at", "g.note", "g.created_at", "g.plan_id"]);
}

type GrantRow = Awaited<ReturnType<ReturnType<typeof grantQuery>["executeTakeFirstOrThrow"]>>;

function toGrant(r: GrantRow): StoredGrant {
  return {
    id: r.id,
    toolId: r.tool_id,
    personId: r.person_id,
    email: r.email,
    kind: r.kind,
    startsAt: Number(r.starts_at),
    endsAt: r.ends_at === null ? null : Number(r.ends_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    note: r.note,
    createdAt: Number(r.created_at),
    planId: r.plan_id,
  };
}

export async function findGrant(ex: Executor, scope: { workspaceId: string; env: Env; toolId: string }, grantId: string): Promise<StoredGrant | null> {
  const row = await grantQuery(ex)
    .where("g.id", "=", grantId)
    .where("g.workspace_id", "=", scope.workspaceId)
    .where("g.env", "=", scope.env)
    .where("g.tool_id", "=", scope.toolId)
    .executeTakeFirst();
  return row ? toGrant(row) : null;
}

/** A person's grants and trials for a tool, newest first. */
export async function listGrantsOf(ex: Executor, toolId: string, personId: string): Promise<StoredGrant[]> {
  const rows = await grantQuery(ex)
    .where("g.person_id", "=", personId)
    .where("g.tool_id", "=", toolId)
    .orderBy("g.created_at", "desc")
    .orderBy("g.id", "desc")
    .execute();
  return rows.map(toGrant);
}

/** The grants and trials of these people, any tool, by person. */
export async function listGrantsOfPeople(ex: Executor, personIds: readonly string[]): Promise<Map<string, StoredGrant[]>> {
  const result = new Map<string, StoredGrant[]>();
  if (personIds.length === 0) return result;
  const rows = await grantQuery(ex).where("g.person_id", "in", personIds).execute();
  for (const r of rows) {
    const list = result.get(r.person_id);
    if (list) list.push(toGrant(r));
    else result.set(r.person_id, [toGrant(r)]);
  }
  return result;
}

/** Sets revoked_at unless the grant is already revoked; the first revocation's time stands. */
export async function revokeGrantRow(ex: Executor, grantId: string, now: number): Promise<void> {
  await ex.updateTable("grants").set({ revoked_at: now }).where("id", "=", grantId).where("revoked_at", "is", null).execute();
}
