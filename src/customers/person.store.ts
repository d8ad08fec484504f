import type { Executor } from "../db/database.js";
import { prepared } from "../db/prepared.js";
import type { Env } from "../db/schema.js";
import { newId } from "../ids.js";
import { normaliseEmail } from "./email.js";

export interface Person {
  id: string;
  email: string;
  signedInAt: number | null;
}

const selectPerson = prepared((ex, p) =>
  ex
    .selectFrom("people")
    .select(["id", "email", "signed_in_at"])
    .where("workspace_id", "=", p<string>(0))
    .where("env", "=", p<Env>(1))
    .where("email_norm", "=", p<string>(2)),
);

export async function findPersonByEmail(ex: Executor, workspaceId: string, env: Env, email: string): Promise<Person | null> {
  const [row] = await selectPerson(ex, [workspaceId, env, normaliseEmail(email)]);
  return row ? { id: row.id, email: row.email, signedInAt: row.signed_in_at === null ? null : Number(row.signed_in_at) } : null;
}

/** The person for an address, created (without an account) when the address is new. */
export async function ensurePerson(ex: Executor, workspaceId: string, env: Env, email: string, now: number): Promise<Person> {
  await ex
    .insertInto("people")
    .values({ id: newId("psn"), workspace_id: workspaceId, env, email, email_norm: normaliseEmail(email), signed_in_at: null, created_at: now })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "email_norm"]).doNothing())
    .execute();
  const person = await findPersonByEmail(ex, workspaceId, env, email);
  if (!person) throw new Error("person vanished right after it was written");
  return person;
}

/** Records that the address signed in to the workspace; the first sign-in time is kept. */
export async function markPersonSignedIn(ex: Executor, personId: string, at: number): Promise<void> {
  await ex.updateTable("people").set({ signed_in_at: at }).where("id", "=", personId).where("signed_in_at", "is", null).execute();
}

export async function findPeopleByIds(ex: Executor, ids: readonly string[]): Promise<Map<string, Person>> {
  if (ids.length === 0) return new Map();
  const rows = await ex.selectFrom("people").select(["id", "email", "signed_in_at"]).where("id", "in", ids).execute();
  return new Map(rows.map((r) => [r.id, { id: r.id, email: r.email, signedInAt: r.signed_in_at === null ? null : Number(r.signed_in_at) }]));
}

/** A person of this workspace environment by id (a purchase's `warden_account`), or null. */
export async function findPersonById(ex: Executor, workspaceId: string, env: Env, id: string): Promise<Person | null> {
  const row = await ex
    .selectFrom("people")
    .select(["id", "email", "signed_in_at"])
    .where("id", "=", id)
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .executeTakeFirst();
  return row ? { id: row.id, email: row.email, signedInAt: row.signed_in_at === null ? null : Number(row.signed_in_at) } : null;
}
