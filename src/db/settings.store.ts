import type { Executor } from "./database.js";

/** A server-wide setting, created with `initial` the first time any process asks for it. */
export async function ensureSetting(ex: Executor, name: string, initial: () => string): Promise<string> {
  await ex
    .insertInto("settings")
    .values({ name, value: initial() })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await ex.selectFrom("settings").select("value").where("name", "=", name).executeTakeFirstOrThrow();
  return row.value;
}
