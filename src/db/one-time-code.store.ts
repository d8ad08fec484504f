import type { Executor } from "./database.js";

// A mailed code's tries and single use, the same rule for an extension's sign-in codes
// and an owner's codes and links, which live in tables of their own.
type CodeTable = "sign_in_codes" | "owner_codes";

/** Takes one try of the code; false when none is left (a concurrent try took the last). */
export async function takeCodeTry(ex: Executor, table: CodeTable, id: string, maxAttempts: number): Promise<boolean> {
  const result = await ex
    .updateTable(table)
    .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
    .where("id", "=", id)
    .where("attempts", "<", maxAttempts)
    .where("closed_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Uses the code up; false when it was closed meanwhile (single use). */
export async function closeCode(ex: Executor, table: CodeTable, id: string, now: number): Promise<boolean> {
  const result = await ex.updateTable(table).set({ closed_at: now }).where("id", "=", id).where("closed_at", "is", null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
