import { type Kysely, PostgresAdapter, sql } from "kysely";

// Finding a customer by part of their address (the dashboard's search) at a million
// people: an index of the address's trigrams, written in the transaction that writes the
// person (people are never deleted and their address never changes, so an insert is the
// only event: `insertPeople` in customers/person.store.ts on SQLite, the index itself on
// PostgreSQL). Both indexes answer a substring of 3 characters or more; the start
// marker below lets one or two characters find the addresses that start with them.
// Figures: bench/README.md, "Customer search".
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return upPostgres(db);
  // Contentless: the index refers to each person by the rowid of their `people` row and
  // keeps no copy of the address (the search reads it from `people`). Rowids of
  // `people` stay as they are: Warden never runs VACUUM, its backup copies pages, and
  // SQLite 3.54's VACUUM keeps them too (checked). "^^" marks the start of the address.
  await sql`create virtual table people_search using fts5(address, tokenize = 'trigram', content = '', contentless_delete = 1)`.execute(db);
  await sql`insert into people_search (rowid, address) select rowid, '^^' || email from people`.execute(db);
}

/**
 * PostgreSQL: pg_trgm's GIN index on the address in lower case. pg_trgm ships with
 * PostgreSQL and is a trusted extension (13 and later): a role with CREATE on the
 * database installs it. A role that cannot is no reason to refuse to start: the
 * migration goes on without the index and search still answers, by reading the
 * workspace environment's people (docs/decisions.md, "Customers list").
 */
async function upPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`savepoint pg_trgm`.execute(db);
  try {
    // In public, not the first schema of the search path: a schema dropped with its
    // contents must not take the extension, and every other schema's index, with it.
    await sql`create extension if not exists pg_trgm schema public`.execute(db);
    await sql`release savepoint pg_trgm`.execute(db);
  } catch {
    await sql`rollback to savepoint pg_trgm`.execute(db);
  }
  // Wherever the extension lives (an operator may have installed it in another schema).
  const found = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
    join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = found.rows[0]?.schema;
  if (schema === undefined) return;
  await sql`create index people_email_search on people using gin (lower(email) ${sql.id(schema, "gin_trgm_ops")})`.execute(db);
}
