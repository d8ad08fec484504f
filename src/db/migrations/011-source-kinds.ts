import { type Kysely, PostgresAdapter, sql } from "kysely";

// Retrieve-a-customer looked for the person's licences, subscriptions and grants in three
// indexes, whether or not the person had any of each: with a million customers each
// lookup is a page that is rarely in the cache, and most people have one kind of source
// or none. `people.source_kinds` says which kinds a person has ever had (a bit each:
// SOURCE_KIND_BITS in customers/customer.store.ts), so a retrieve reads only those.
// Sources are never deleted nor moved to another person, so the bits only ever get set:
// by trigger, in the transaction that inserts the source, whoever inserts it.
const SOURCES = [
  ["licences", 1],
  ["subscriptions", 2],
  ["grants", 4],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable("people")
    .addColumn("source_kinds", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  for (const [table, bit] of SOURCES) {
    await sql`update people set source_kinds = source_kinds | ${sql.lit(bit)}
      where exists (select 1 from ${sql.table(table)} as s where s.person_id = people.id)`.execute(db);
  }
  // Only the first source of a kind writes the person's row.
  const mark = (bit: number, personId: string) =>
    sql`update people set source_kinds = source_kinds | ${sql.lit(bit)} where id = ${sql.raw(personId)} and source_kinds & ${sql.lit(bit)} = 0`;
  if (postgres) {
    for (const [table, bit] of SOURCES) {
      await sql`create function ${sql.id(`warden_mark_${table}`)}() returns trigger language plpgsql as $$
begin ${mark(bit, "new.person_id")}; return null; end $$`.execute(db);
      await sql`create trigger ${sql.id(`${table}_source_kind`)} after insert on ${sql.table(table)}
        for each row execute function ${sql.id(`warden_mark_${table}`)}()`.execute(db);
    }
    return;
  }
  for (const [table, bit] of SOURCES) {
    await sql`create trigger ${sql.id(`${table}_source_kind`)} after insert on ${sql.table(table)}
      begin ${mark(bit, "new.person_id")}; end`.execute(db);
  }
}
