import type { Executor } from "../db/database.js";

/** The sealed keys of these licences that have one. */
export async function findSealedLicenceKeys(ex: Executor, licenceIds: readonly string[]): Promise<Map<string, string>> {
  if (licenceIds.length === 0) return new Map();
  const rows = await ex.selectFrom("licences").select(["id", "key_sealed"]).where("id", "in", licenceIds).where("key_sealed", "is not", null).execute();
  return new Map(rows.flatMap((r) => (r.key_sealed === null ? [] : [[r.id, r.key_sealed] as const])));
}

/** Gives a licence its key unless it has one already; answers whether this call gave it. */
export async function setLicenceKey(ex: Executor, licenceId: string, keyHash: string, keySealed: string): Promise<boolean> {
  const result = await ex
    .updateTable("licences")
    .set({ key_hash: keyHash, key_sealed: keySealed })
    .where("id", "=", licenceId)
    .where("key_hash", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The licence a key hash names, in any workspace (the caller checks the workspace). */
export async function findLicenceIdByKeyHash(ex: Executor, keyHash: string): Promise<{ id: string; keyHash: string } | null> {
  const row = await ex.selectFrom("licences").select(["id", "key_hash"]).where("key_hash", "=", keyHash).executeTakeFirst();
  return row?.key_hash ? { id: row.id, keyHash: row.key_hash } : null;
}

/** Devices activated with this licence and not signed out. */
export async function countActivatedDevices(ex: Executor, licenceId: string): Promise<number> {
  const row = await ex
    .selectFrom("devices")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("licence_id", "=", licenceId)
    .where("signed_out_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
