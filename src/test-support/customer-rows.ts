// Customers in bulk for the list's tests: thousands of rows in a few statements.
import { toolScope } from "../customers/customer.service.js";
import { type CustomerRow, upsertCustomerRows } from "../customers/customer.store.js";
import { ensurePeople } from "../customers/person.store.js";
import type { CustomerKind, Env } from "../db/schema.js";
import type { TestEnv, Workspace } from "./harness.js";

/**
 * Customer rows of the workspace's tool for these addresses, one second apart in the
 * order given (the last is the newest), written in batches through the stores import
 * uses. No sources: a row's kind is what the test says, which is all the list, the
 * search and the export read of it (an entitlement is computed from sources: none).
 */
export async function seedCustomerRows({ services, clock }: TestEnv, ws: Workspace, emails: readonly string[], kind: CustomerKind, env: Env = "test") {
  const scope = toolScope(ws.workspaceId, env, ws.tool);
  for (let i = 0; i < emails.length; i += 500) {
    const batch = emails.slice(i, i + 500);
    const start = clock.now();
    clock.advance(batch.length * 1000);
    const people = await ensurePeople(
      services.db,
      ws.workspaceId,
      env,
      batch.map((email) => ({ email, signedInAt: kind === "member" ? start : null })),
      start,
    );
    const rows: CustomerRow[] = batch.map((email, j) => {
      const person = people.get(email.toLowerCase());
      if (!person) throw new Error(`no person for ${email}`);
      return { personId: person.id, since: start + j * 1000, signedIn: kind === "member", kind, heldUntil: null };
    });
    await upsertCustomerRows(services.db, scope, rows);
  }
}
