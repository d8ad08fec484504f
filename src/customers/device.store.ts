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
  await ex
    .insertInto("devices")
    .values({
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
    })
    .execute();
}
