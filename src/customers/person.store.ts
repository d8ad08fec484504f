import { type Insertable, sql } from "kysely";
import { type Db, dialectOf, type Executor } from "../db/database.js";
import { prepared } from "../db/prepared.js";
import type { Env, PeopleTable } from "../db/schema.js";
import { newId } from "../ids.js";
import { normaliseEmail } from "./email.js";

export interface Person {
  id: string;
  email: string;
  signedInAt: number | null;
}

/**
 * Inserts the people no one has inserted yet (an address already there is left as it
 * is). On SQLite the address search's index (migration 027) gets those inserted, in the
 * same statement's transaction; PostgreSQL's index follows the table by itself. Not a
 * trigger: a trigger on `people` makes SQLite plan a scan of `customers` (the foreign
 * key's bookkeeping, skipped at run time) into every insert of a person.
 */
async function insertPeople(ex: Executor, values: Insertable<PeopleTable>[]): Promise<void> {
  // The person and their index row commit together, or neither does.
  if (!ex.isTransaction && dialectOf(ex) === "sqlite") return (ex as Db).transaction().execute((trx) => insertPeople(trx, values));
  await ex
    .insertInto("people")
    .values(values)
    .onConflict((oc) => oc.columns(["workspace_id", "env", "email_norm"]).doNothing())
    .execute();
  if (dialectOf(ex) === "postgres") return;
  // Those of these ids that are there now are the ones this statement inserted (another
  // writer's person for an address kept its own id). Not RETURNING: like a trigger, it
  // makes SQLite plan that scan of `customers`.
  const ids = values.map((v) => v.id);
  // "^^" marks where an address starts, so that one or two characters find a start.
  await sql`insert into people_search (rowid, address) select rowid, '^^' || email from people where id in (${sql.join(ids)})`.execute(ex);
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
  await insertPeople(ex, [{ id: newId("psn"), workspace_id: workspaceId, env, email, email_norm: normaliseEmail(email), signed_in_at: null, created_at: now }]);
  const person = await findPersonByEmail(ex, workspaceId, env, email);
  if (!person) throw new Error("person vanished right after it was written");
  return person;
}

/** Records that the address signed in to the workspace; the first sign-in time is kept. */
export async function markPersonSignedIn(ex: Executor, personId: string, at: number): Promise<void> {
  await ex.updateTable("people").set({ signed_in_at: at }).where("id", "=", personId).where("signed_in_at", "is", null).execute();
}

/** People of a workspace environment by normalised address (those that exist). */
export async function findPeopleByEmails(ex: Executor, workspaceId: string, env: Env, emailNorms: readonly string[]): Promise<Map<string, Person>> {
  if (emailNorms.length === 0) return new Map();
  const rows = await ex
    .selectFrom("people")
    .select(["id", "email", "email_norm", "signed_in_at"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("email_norm", "in", emailNorms)
    .execute();
  return new Map(rows.map((r) => [r.email_norm, { id: r.id, email: r.email, signedInAt: r.signed_in_at === null ? null : Number(r.signed_in_at) }]));
}

/**
 * ensurePerson for many addresses in a few statements: the people by normalised address.
 * A first sign-in given for an address is recorded unless one is recorded already
 * (markPersonSignedIn's rule).
 */
export async function ensurePeople(
  ex: Executor,
  workspaceId: string,
  env: Env,
  people: readonly { email: string; signedInAt: number | null }[],
  now: number,
): Promise<Map<string, Person>> {
  const wanted = new Map<string, { email: string; signedInAt: number | null }>();
  for (const person of people) {
    const norm = normaliseEmail(person.email);
    const earlier = wanted.get(norm);
    if (!earlier) wanted.set(norm, { ...person });
    else if (earlier.signedInAt === null) earlier.signedInAt = person.signedInAt;
  }
  const found = await findPeopleByEmails(ex, workspaceId, env, [...wanted.keys()]);
  const created = [...wanted].filter(([norm]) => !found.has(norm));
  if (created.length > 0) {
    const values = created.map(([norm, p]) => ({
      id: newId("psn"),
      workspace_id: workspaceId,
      env,
      email: p.email,
      email_norm: norm,
      signed_in_at: p.signedInAt,
      created_at: now,
    }));
    // Another writer may create one of them meanwhile (PostgreSQL): theirs is kept and read back.
    await insertPeople(ex, values);
    for (const [norm, person] of await findPeopleByEmails(
      ex,
      workspaceId,
      env,
      created.map(([norm]) => norm),
    ))
      found.set(norm, person);
  }
  for (const [norm, p] of wanted) {
    const person = found.get(norm);
    if (person && person.signedInAt === null && p.signedInAt !== null) {
      await markPersonSignedIn(ex, person.id, p.signedInAt);
      person.signedInAt = p.signedInAt;
    }
  }
  return found;
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

/**
 * The address of the person each of these licences, subscriptions and grants belongs to,
 * by the source's id, in one workspace environment only (an id of another is left out):
 * what the audit log names an entry about one of them by. Three indexed lookups by id.
 */
export async function findSourceHolders(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  ids: { licences: readonly string[]; subscriptions: readonly string[]; grants: readonly string[] },
): Promise<Map<string, string>> {
  const of = async (table: "licences" | "subscriptions" | "grants", list: readonly string[]) =>
    list.length === 0
      ? []
      : ex
          .selectFrom(`${table} as s` as "licences as s")
          .innerJoin("people as p", "p.id", "s.person_id")
          .select(["s.id", "p.email"])
          .where("s.workspace_id", "=", scope.workspaceId)
          .where("s.env", "=", scope.env)
          .where("s.id", "in", [...new Set(list)])
          .execute();
  const rows = [...(await of("licences", ids.licences)), ...(await of("subscriptions", ids.subscriptions)), ...(await of("grants", ids.grants))];
  return new Map(rows.map((r) => [r.id, r.email]));
}
