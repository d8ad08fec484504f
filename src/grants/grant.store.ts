import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

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
}

export async function insertGrant(ex: Executor, grant: Omit<StoredGrant, "email"> & { workspaceId: string; env: Env }): Promise<void> {
  await ex
    .insertInto("grants")
    .values({
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
    })
    .execute();
}

function grantQuery(ex: Executor) {
  return ex
    .selectFrom("grants as g")
    .innerJoin("people as p", "p.id", "g.person_id")
    .select(["g.id", "g.tool_id", "g.person_id", "p.email", "g.kind", "g.starts_at", "g.ends_at", "g.revoked_at", "g.note", "g.created_at"]);
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

/** Sets revoked_at unless the grant is already revoked; the first revocation's time stands. */
export async function revokeGrantRow(ex: Executor, grantId: string, now: number): Promise<void> {
  await ex.updateTable("grants").set({ revoked_at: now }).where("id", "=", grantId).where("revoked_at", "is", null).execute();
}
