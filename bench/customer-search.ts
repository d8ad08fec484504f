// The dashboard's customers list at a million customers of one tool (issue 35): a search
// by part of an address, the list's first page with its count, and an export's count, on
// each engine, through the use cases the pages call. People and customer rows are made by
// the database itself (a million rows in one statement each), the search index with
// them. Not part of `npm run
// bench`: run it on its own (about 10 minutes on a quiet machine).
//
//   node --import tsx bench/customer-search.ts [--customers 1000000] [--engines sqlite,postgres]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { browseCustomers, exportCustomers, SEARCH_MATCHES, toolScope } from "../src/customers/customer.service.js";
import { searchCustomerRows } from "../src/customers/customer.store.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../src/db/database.js";
import type { RequestContext } from "../src/services.js";
import { createServices } from "../src/services.js";
import { createOwner, createTool, createWorkspace, listWorkspaceOwnerIds } from "../src/workspaces/workspace.service.js";

const { values } = parseArgs({ options: { customers: { type: "string", default: "1000000" }, engines: { type: "string", default: "sqlite,postgres" } } });
const CUSTOMERS = Number(values.customers);
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const ROUNDS = 15;

// Addresses like bench/customer-mix.ts's: ten first names, six domains, the index.
const NAMES = ["ada", "grace", "alan", "linus", "margaret", "barbara", "edsger", "donald", "frances", "ken"];
const DOMAINS = ["example.com", "mail.example.org", "example.net", "corp.example.io", "gmail.com", "googlemail.com"];
const pick = (list: string[], index: string) => sql.raw(`(case ${list.map((v, i) => `when ${index} = ${i} then '${v}'`).join(" ")} end)`);

/** The searches a vendor types, from one match to most of the tool. */
const SEARCHES = [
  { what: "one address, in full", text: "ada.c123600@example.com" },
  { what: "a rare part (1 match)", text: "c987654@" },
  { what: "a part of 11 addresses", text: "c12345" },
  { what: "a first name (10%)", text: "grace" },
  { what: "a domain (~2/3)", text: "example" },
  { what: "nothing matches", text: "zzzq" },
  { what: "1 character, the start (30%)", text: "a" },
  { what: "2 characters, the start (10%)", text: "li" },
];

async function seed(storage: Storage, workspaceId: string): Promise<void> {
  const { db, dialect } = storage;
  const n = CUSTOMERS;
  const numbers =
    dialect === "postgres"
      ? sql`select i from generate_series(0, ${sql.lit(n - 1)}) as g(i)`
      : sql`with recursive g(i) as (select 0 union all select i + 1 from g where i < ${sql.lit(n - 1)}) select i from g`;
  const name = pick(NAMES, "(i % 10)");
  const domain = pick(DOMAINS, "((i / 10) % 6)");
  const t0 = 1_700_000_000_000;
  let started = performance.now();
  await sql`insert into people (id, workspace_id, env, email, email_norm, signed_in_at, created_at, source_kinds)
    select 'psn_b' || i, ${workspaceId}, 'live', ${name} || '.c' || i || '@' || ${domain}, ${name} || '.c' || i || '@' || ${domain}, null, ${sql.lit(t0)} + i, 0
    from (${numbers}) as n`.execute(db);
  // Warden writes SQLite's index row with each person (person.store.ts); here, as the migration fills it.
  if (dialect === "sqlite") await sql`insert into people_search (rowid, address) select rowid, '^^' || email from people`.execute(db);
  console.log(
    `  ${n.toLocaleString("en")} people in ${((performance.now() - started) / 1000).toFixed(1)} s (with the search index: SQLite's FTS5 table, PostgreSQL's GIN)`,
  );
  started = performance.now();
  // 60% hold the tool, 30% signed in without it, 10% lapsed.
  await sql`insert into customers (workspace_id, env, tool_id, person_id, since, signed_in, kind, held_until)
    select ${workspaceId}, 'live', 'tabmaster', 'psn_b' || i, ${sql.lit(t0)} + i * 1000, case when i % 10 between 6 and 8 then 1 else 0 end,
      case when i % 10 < 6 then 'holder' when i % 10 < 9 then 'member' else 'none' end, null
    from (${numbers}) as n`.execute(db);
  console.log(`  ${n.toLocaleString("en")} customer rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await sql`analyze`.execute(db);
}

function summary(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `median ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms`;
}

async function timed(run: () => Promise<unknown>): Promise<number[]> {
  await run();
  const ms: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  return ms;
}

async function measure(dialect: Dialect): Promise<void> {
  console.log(`\n${dialect}, ${CUSTOMERS.toLocaleString("en")} customers of one tool`);
  const dir = mkdtempSync(join(tmpdir(), "warden-search-"));
  const schema = `bench_search_${process.pid}`;
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
  }
  // PostgreSQL's own time for the search statement (EXPLAIN ANALYZE of the statement the
  // use case sent), which a machine busy with other work inflates far less than a round trip.
  let searchStatement: { text: string; parameters: readonly unknown[] } | null = null;
  const onQuery = (text: string, parameters: readonly unknown[]) => {
    if (text.includes("from people p")) searchStatement = { text, parameters };
  };
  const storage =
    dialect === "postgres"
      ? openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 4, onQuery })
      : openStorage({ databaseUrl: null, sqliteFile: join(dir, "warden.sqlite") });
  const executionMs = async (): Promise<string> => {
    const found = searchStatement as { text: string; parameters: readonly unknown[] } | null;
    if (dialect !== "postgres" || !found) return "";
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      const ms: number[] = [];
      for (let i = 0; i < 7; i++) {
        const result = await client.query(`explain (analyze, format json) ${found.text}`, [...found.parameters]);
        ms.push((result.rows[0]["QUERY PLAN"][0] as { "Execution Time": number })["Execution Time"]);
      }
      return `; PostgreSQL's execution ${summary(ms)}`;
    } finally {
      await client.end();
    }
  };
  try {
    await migrateToLatest(storage.db, dialect);
    const config = parseConfig({ WARDEN_SECRET_KEY: "bench-secret-key-0123456789abcdefghijklmnop", WARDEN_LIMIT_ROWS_READ_PER_DAY: "1000000000" });
    const services = await createServices(config, { clock: systemClock, storage: { ...storage, close: async () => {} } });
    const { db } = services;
    await createOwner(db, systemClock, { email: "search-owner@example.com" });
    const workspace = await createWorkspace(db, systemClock, { slug: "search", name: "Search", ownerEmail: "search-owner@example.com", plan: "pro" });
    await createTool(db, systemClock, { workspace: "search", id: "tabmaster", name: "Tab Master" });
    await seed(storage, workspace.id);
    const ctx: RequestContext = {
      services,
      principal: {
        keyId: "bench",
        workspaceId: workspace.id,
        workspaceSlug: "search",
        plan: "pro",
        env: "live",
        ownerIds: await listWorkspaceOwnerIds(db, workspace.id),
        keyRequestCounted: true,
      },
    };
    const page = (search?: string, entitled?: boolean) =>
      browseCustomers(ctx, "tabmaster", { limit: 50, ...(entitled === undefined ? {} : { entitled }) }, { lapsed: true, ...(search ? { search } : {}) });
    const scope = toolScope(workspace.id, "live", "tabmaster");
    const statement = (text: string) => searchCustomerRows(db, scope, { kinds: ["holder", "member", "none"], text, limit: SEARCH_MATCHES + 1 });
    for (const { what, text } of SEARCHES) {
      const found = await page(text);
      console.log(
        `  search ${what} "${text}": ${found.total.moreMatches ? "more than 1,000" : found.total.count} found; the search statement ${summary(await timed(() => statement(text)))}${await executionMs()}; the page (use case) ${summary(await timed(() => page(text)))}`,
      );
    }
    console.log(`  the list's first page with its count, everyone: ${summary(await timed(() => page()))}`);
    console.log(`  the list's first page with its count, not entitled: ${summary(await timed(() => page(undefined, false)))}`);
    const second = await page();
    console.log(
      `  the list's second page: ${summary(await timed(() => browseCustomers(ctx, "tabmaster", { limit: 50, cursor: second.next_cursor ?? "" }, { lapsed: true })))}`,
    );
    let rows = 0;
    const counted = await timed(async () => {
      const exported = await exportCustomers(ctx, "tabmaster", {}, { lapsed: true });
      rows = exported.rows;
      await exported.chunks.return(undefined);
    });
    console.log(`  an export's count of its ${rows.toLocaleString("en")} rows (before it starts): ${summary(counted)}`);
    const started = performance.now();
    const memory = process.memoryUsage().rss;
    let peak = memory;
    const exported = await exportCustomers(ctx, "tabmaster", { entitled: true }, { lapsed: true });
    let written = 0;
    for await (const chunk of exported.chunks) {
      written += chunk.length;
      if (written % 50_000 < chunk.length) peak = Math.max(peak, process.memoryUsage().rss);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `  an export of the ${written.toLocaleString("en")} holders: ${seconds.toFixed(1)} s (${Math.round(written / seconds).toLocaleString("en")} rows/s), resident memory ${Math.round(memory / 2 ** 20)} → at most ${Math.round(peak / 2 ** 20)} MB`,
    );
    if (dialect === "postgres") {
      // Without pg_trgm (a role that may not create it): the same search, no index.
      await sql`drop index people_email_search`.execute(db);
      for (const { what, text } of SEARCHES) {
        console.log(`  without pg_trgm, search ${what}: the statement ${summary(await timed(() => statement(text)))}${await executionMs()}`);
      }
    }
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
    if (dialect === "postgres") {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    }
  }
}

for (const engine of String(values.engines).split(",")) await measure(engine as Dialect);
