import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

export interface Device {
  id: string;
  workspaceId: string;
  env: Env;
  toolId: string;
  personId: string;
  /** The licence the device was activated with, when it was. */
  licenceId: string | null;
  name: string;
  platform: string | null;
  createdAt: number;
  lastActiveAt: number | null;
  /** A signed-out device no longer counts among the person's devices. */
  signedOutAt: number | null;
}

export async function insertDevice(ex: Executor, device: Device): Promise<void> {
  await insertDevices(ex, [device]);
}

/** Several devices in one statement. */
export async function insertDevices(ex: Executor, devices: readonly Device[]): Promise<void> {
  if (devices.length === 0) return;
  await ex
    .insertInto("devices")
    .values(
      devices.map((device) => ({
        id: device.id,
        workspace_id: device.workspaceId,
        env: device.env,
        tool_id: device.toolId,
        person_id: device.personId,
        licence_id: device.licenceId,
        name: device.name,
        platform: device.platform,
        created_at: device.createdAt,
        last_active_at: device.lastActiveAt,
        signed_out_at: device.signedOutAt,
      })),
    )
    .execute();
}

/** The devices of these people, any tool, by person. */
export async function listDevicesOfPeople(ex: Executor, personIds: readonly string[]): Promise<Map<string, Device[]>> {
  const result = new Map<string, Device[]>();
  if (personIds.length === 0) return result;
  const rows = await ex
    .selectFrom("devices")
    .select(["id", "workspace_id", "env", "tool_id", "person_id", "licence_id", "name", "platform", "created_at", "last_active_at", "signed_out_at"])
    .where("person_id", "in", personIds)
    .execute();
  for (const r of rows) {
    const device: Device = {
      id: r.id,
      workspaceId: r.workspace_id,
      env: r.env,
      toolId: r.tool_id,
      personId: r.person_id,
      licenceId: r.licence_id,
      name: r.name,
      platform: r.platform,
      createdAt: Number(r.created_at),
      lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
      signedOutAt: r.signed_out_at === null ? null : Number(r.signed_out_at),
    };
    {
      const list = result.get(r.person_id);
      if (list) list.push(device);
      else result.set(r.person_id, [device]);
    }
  }
  return result;
}
