import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/** A signed-in device as its bearer token finds it. */
export interface DeviceSession {
  deviceId: string;
  workspaceId: string;
  workspaceSlug: string;
  env: Env;
  toolId: string;
  personId: string;
  /** The person's address as first stored. */
  email: string;
  /** The licence the device was activated with (no sign-in), or null for a signed-in device. */
  licenceId: string | null;
  tokenHash: string;
}

export interface DeviceView {
  id: string;
  toolId: string;
  name: string;
  platform: string | null;
  createdAt: number;
  lastActiveAt: number | null;
}

/** The device of a token hash, if it is still signed in. */
export async function findSessionByTokenHash(ex: Executor, tokenHash: string): Promise<DeviceSession | null> {
  const row = await ex
    .selectFrom("devices")
    .innerJoin("workspaces", "workspaces.id", "devices.workspace_id")
    .innerJoin("people", "people.id", "devices.person_id")
    .select([
      "devices.id",
      "devices.workspace_id",
      "workspaces.slug",
      "devices.env",
      "devices.tool_id",
      "devices.person_id",
      "people.email",
      "devices.licence_id",
      "devices.token_hash",
    ])
    .where("devices.token_hash", "=", tokenHash)
    .where("devices.signed_out_at", "is", null)
    .executeTakeFirst();
  if (!row?.token_hash) return null;
  return {
    deviceId: row.id,
    workspaceId: row.workspace_id,
    workspaceSlug: row.slug,
    env: row.env,
    toolId: row.tool_id,
    personId: row.person_id,
    email: row.email,
    licenceId: row.licence_id,
    tokenHash: row.token_hash,
  };
}

export async function setSessionToken(ex: Executor, deviceId: string, tokenHash: string): Promise<void> {
  await ex.updateTable("devices").set({ token_hash: tokenHash }).where("id", "=", deviceId).execute();
}

export async function touchDevice(ex: Executor, deviceId: string, now: number): Promise<void> {
  await ex.updateTable("devices").set({ last_active_at: now }).where("id", "=", deviceId).execute();
}

/** The person's signed-in devices in one workspace environment, oldest first. */
export async function listSignedInDevices(ex: Executor, scope: { workspaceId: string; env: Env; personId: string }): Promise<DeviceView[]> {
  const rows = await ex
    .selectFrom("devices")
    .select(["id", "tool_id", "name", "platform", "created_at", "last_active_at"])
    .where("person_id", "=", scope.personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("signed_out_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    toolId: r.tool_id,
    name: r.name,
    platform: r.platform,
    createdAt: Number(r.created_at),
    lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
  }));
}

/** Signs one of the person's devices out; answers its tool, or null when it is not theirs or already out. */
export async function signOutDevice(
  ex: Executor,
  scope: { workspaceId: string; env: Env; personId: string },
  deviceId: string,
  now: number,
): Promise<string | null> {
  const row = await ex
    .updateTable("devices")
    .set({ signed_out_at: now, token_hash: null })
    .where("id", "=", deviceId)
    .where("person_id", "=", scope.personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("signed_out_at", "is", null)
    .returning("tool_id")
    .executeTakeFirst();
  return row?.tool_id ?? null;
}
