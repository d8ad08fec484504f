// Seeds one database for bench/ab.ts with the code of a given checkout: its own
// migrations, `setUpWorkspace` and `seedCustomers` (that checkout's src/ and bench/seed.ts),
// so that an older build is compared on a database it accepts (Warden refuses a database
// that newer code has migrated). The checkout's bench/seed.ts must offer the functions
// this one does, with the same signatures.
//
//   node --import tsx bench/ab-seed.ts '<SeedSpec as JSON>'
//
// Prints the workspace's live key as the last line of stdout.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";

export interface SeedSpec {
  /** The checkout whose code seeds (a folder with src/ and bench/). */
  root: string;
  customers: number;
  /** SQLite: the data folder; PostgreSQL: the URL and the schema (which must exist). */
  dataDir?: string;
  pg?: { url: string; schema: string };
  /** Open a hosted pages' web session for the first seeded person (live), printed as `session <token>` before the key. */
  session?: boolean;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as SeedSpec;
const load = (file: string) => import(pathToFileURL(join(spec.root, file)).href);
const { migrateToLatest, openStorage } = (await load("src/db/database.ts")) as typeof import("../src/db/database.js");
const { seedCustomers, setUpWorkspace } = (await load("bench/seed.ts")) as typeof import("./seed.js");

const storage = spec.pg
  ? openStorage({ databaseUrl: spec.pg.url, pgSchema: spec.pg.schema, poolSize: 2 })
  : openStorage({ databaseUrl: null, dataDir: spec.dataDir ?? "" });
try {
  await migrateToLatest(storage.db, storage.dialect);
  const ws = await setUpWorkspace(storage);
  await seedCustomers(storage, ws, { from: 0, to: spec.customers, now: Date.now() });
  if (spec.session) {
    const { openCustomerSession } = (await load(
      "src/customer-pages/customer-session.service.ts",
    )) as typeof import("../src/customer-pages/customer-session.service.js");
    const person = await storage.db
      .selectFrom("people")
      .select("id")
      .where("workspace_id", "=", ws.workspaceId)
      .where("env", "=", "live")
      .limit(1)
      .executeTakeFirstOrThrow();
    const token = await storage.db
      .transaction()
      .execute((trx) => openCustomerSession(trx, { workspaceId: ws.workspaceId, env: "live", personId: person.id, licenceId: null, now: Date.now() }));
    process.stdout.write(`session ${token}\n`);
  }
  // As the bench does after its load: what autovacuum would do within a minute.
  if (spec.pg) await sql`analyze`.execute(storage.db);
  process.stdout.write(`${ws.key}\n`);
} finally {
  await storage.close();
}
