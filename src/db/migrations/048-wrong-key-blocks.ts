import { type Kysely, sql } from "kysely";

// The addresses blocked for wrong keys, read once a second by every serving process's key
// watch (auth/key-watch.ts): the counters of that kind whose minute is still open. A range
// of the primary key cannot find them on PostgreSQL, whose text order depends on the
// database's collation (under en_US or ICU ';' sorts before ':'), and the counters of every
// other kind (per key, per workspace, per device's address) may be many; this partial index
// holds the wrong-key counters alone, by the end of their minute. The predicate is written
// as a literal, as the query writes it, so that both engines see the query implies it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index counters_wrong_keys on counters (window_end) where scope like 'wrong-keys:%'`.execute(db);
}
