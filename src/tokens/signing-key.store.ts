import type { Executor } from "../db/database.js";

/** A signing key as stored: the private part still sealed. */
export interface StoredSigningKey {
  kid: string;
  generation: number;
  publicX: string;
  privateSealed: string;
  createdAt: number;
}

/** Inserts the key unless its generation exists already; answers whether it was inserted. */
export async function insertSigningKey(ex: Executor, key: StoredSigningKey): Promise<boolean> {
  const inserted = await ex
    .insertInto("signing_keys")
    .values({ kid: key.kid, generation: key.generation, public_x: key.publicX, private_sealed: key.privateSealed, created_at: key.createdAt })
    .onConflict((oc) => oc.column("generation").doNothing())
    .returning("kid")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Every key, newest generation first. */
export async function listSigningKeys(ex: Executor): Promise<StoredSigningKey[]> {
  const rows = await ex.selectFrom("signing_keys").selectAll().orderBy("generation", "desc").execute();
  return rows.map((r) => ({
    kid: r.kid,
    generation: Number(r.generation),
    publicX: r.public_x,
    privateSealed: r.private_sealed,
    createdAt: Number(r.created_at),
  }));
}

export async function deleteSigningKeys(ex: Executor, kids: readonly string[]): Promise<void> {
  if (kids.length === 0) return;
  await ex.deleteFrom("signing_keys").where("kid", "in", kids).execute();
}
