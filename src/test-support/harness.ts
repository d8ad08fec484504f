// Test workspaces: every storage test runs once per database engine, each test with its
// own services (own clock, own limits) and its own workspace over a per-file database.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import pg from "pg";
import { buildApp } from "../app.js";
import { ManualClock } from "../clock.js";
import { type Config, type Limits, parseConfig } from "../config.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../db/database.js";
import { randomBase62 } from "../ids.js";
import { createServices, type Services } from "../services.js";
import { createBundle, createKey, createOwner, createPlan, createTool, createWorkspace } from "../workspaces/workspace.service.js";
import { sendTestMail } from "./mail.js";
import { checkAgainstOpenApi } from "./openapi-check.js";

export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
export const DIALECTS: Dialect[] = ["sqlite", "postgres"];
const TEST_SECRET_KEY = "test-secret-key-0123456789abcdefghijklmnop";

const storages = new Map<Dialect, Promise<Storage>>();
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** One database per test file and engine: a private SQLite in memory, or a private PostgreSQL schema. */
export function storageFor(dialect: Dialect): Promise<Storage> {
  let storage = storages.get(dialect);
  if (!storage) {
    storage = openTestStorage(dialect);
    storages.set(dialect, storage);
  }
  return storage;
}

async function runOnPg(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A private PostgreSQL schema, dropped when the file's tests end. */
export async function createPgSchema(): Promise<string> {
  const schema = `t_${process.pid}_${randomBase62(8).toLowerCase()}`;
  await runOnPg(`create schema ${schema}`);
  cleanups.push(() => runOnPg(`drop schema ${schema} cascade`));
  return schema;
}

async function openTestStorage(dialect: Dialect, onQuery?: (sql: string) => void): Promise<Storage> {
  if (dialect === "sqlite") {
    const storage = openStorage({ databaseUrl: null, sqliteFile: ":memory:", onQuery });
    cleanups.push(() => storage.close());
    return storage;
  }
  const storage = openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 4, onQuery });
  cleanups.push(() => storage.close());
  return storage;
}

/**
 * Environment variables that point a separate process (the CLI, `warden serve`) at a
 * database of its own: a fresh SQLite data folder, or a private PostgreSQL schema.
 */
export async function privateDatabaseEnv(dialect: Dialect): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), "warden-test-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  if (dialect === "sqlite") return { WARDEN_DATA_DIR: dir };
  const schema = await createPgSchema();
  return { WARDEN_DATA_DIR: dir, DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` };
}

/**
 * A private database (as privateDatabaseEnv) that a newer Warden has migrated: every
 * migration applied, and one this code does not know. Answers the environment and the
 * unknown migration's name.
 */
export async function newerSchemaEnv(dialect: Dialect): Promise<{ env: Record<string, string>; future: string }> {
  const env = await privateDatabaseEnv(dialect);
  const storage = openStorage({ databaseUrl: env.DATABASE_URL ?? null, dataDir: env.WARDEN_DATA_DIR });
  const future = `999-${unique("future")}`;
  try {
    await migrateToLatest(storage.db, storage.dialect);
    await sql`insert into warden_migrations (name, applied_at) values (${future}, 0)`.execute(storage.db);
  } finally {
    await storage.close();
  }
  return { env, future };
}

export interface TestEnv {
  services: Services;
  clock: ManualClock;
  config: Config;
}

export async function testServices(dialect: Dialect, env: Record<string, string> = {}): Promise<TestEnv> {
  return servicesOver(await storageFor(dialect), env);
}

/** Services over a database of their own whose statements are recorded (the text of each, in order): for a test that a path reads nothing. */
export async function countingServices(dialect: Dialect, env: Record<string, string> = {}): Promise<TestEnv & { statements: string[] }> {
  const statements: string[] = [];
  const storage = await openTestStorage(dialect, (text) => statements.push(text));
  return { ...(await servicesOver(storage, env)), statements };
}

/** Services over an SQLite file of their own, for a test that opens a second connection to it (as another process would); answers its path too. */
export async function sqliteFileServices(env: Record<string, string> = {}): Promise<TestEnv & { file: string }> {
  const dir = (await privateDatabaseEnv("sqlite")).WARDEN_DATA_DIR as string;
  const storage = openStorage({ databaseUrl: null, dataDir: dir });
  cleanups.push(() => storage.close());
  return { ...(await servicesOver(storage, env)), file: join(dir, "warden.sqlite") };
}

/** Services over a storage the caller opened (a second "process" over one PostgreSQL schema); the caller closes it. */
export async function servicesOver(storage: Storage, env: Record<string, string> = {}): Promise<TestEnv> {
  const clock = new ManualClock();
  const config = parseConfig({ WARDEN_DOMAIN: "warden.test", WARDEN_SECRET_KEY: TEST_SECRET_KEY, WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1", ...env });
  // The storage outlives the services: the file's cleanup closes it.
  const services = await createServices(config, { clock, storage: { ...storage, close: async () => {} } });
  await sendTestMail(services);
  return { services, clock, config };
}

export interface Workspace {
  slug: string;
  workspaceId: string;
  ownerEmail: string;
  tool: string;
  testKey: string;
  liveKey: string;
}

export const unique = (prefix: string) => `${prefix}-${randomBase62(10).toLowerCase()}`;

/** A fresh owner, workspace, tool and a test and a live key. */
export async function seedWorkspace(services: Services, options: { plan?: "hobby" | "pro" } = {}): Promise<Workspace> {
  const { db, clock } = services;
  const ownerEmail = `${unique("owner")}@example.com`;
  await createOwner(db, clock, { email: ownerEmail });
  const slug = unique("ws");
  const workspace = await createWorkspace(db, clock, { slug, name: "Test workspace", ownerEmail, plan: options.plan ?? "pro" });
  const tool = "tabmaster";
  await createTool(db, clock, { workspace: slug, id: tool, name: "Tab Master" });
  const testKey = (await createKey(db, clock, { workspace: slug, env: "test" })).key;
  const liveKey = (await createKey(db, clock, { workspace: slug, env: "live" })).key;
  return { slug, workspaceId: workspace.id, ownerEmail, tool, testKey, liveKey };
}

/**
 * A fresh workspace with a catalogue: tools tabmaster, linkkeeper and notepad; bundle
 * "suite" of the first two; plans lifetime (one-time) and monthly (subscription) for
 * tabmaster, and suite-lifetime for the bundle.
 */
export async function seedCatalogue(services: Services): Promise<Workspace> {
  const { db, clock } = services;
  const ws = await seedWorkspace(services);
  await createTool(db, clock, { workspace: ws.slug, id: "linkkeeper", name: "Link Keeper" });
  await createTool(db, clock, { workspace: ws.slug, id: "notepad", name: "Notepad" });
  await createBundle(db, clock, { workspace: ws.slug, id: "suite", name: "Suite", toolIds: ["tabmaster", "linkkeeper"] });
  await createPlan(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900 });
  await createPlan(db, clock, {
    workspace: ws.slug,
    tool: "tabmaster",
    id: "monthly",
    name: "Monthly",
    billing: "subscription",
    amountCents: 500,
    interval: "month",
  });
  await createPlan(db, clock, { workspace: ws.slug, bundle: "suite", id: "suite-lifetime", name: "Suite for life", billing: "one_time", amountCents: 9900 });
  return ws;
}

/** An app whose every answer is checked against the OpenAPI document it serves. */
export interface TestApi {
  app: FastifyInstance;
  request(options: InjectOptions & { key?: string }): Promise<LightMyRequestResponse>;
}

export async function testApi(services: Services): Promise<TestApi> {
  const app = await buildApp(services, { logger: false });
  await app.ready();
  cleanups.push(() => app.close());
  return apiOver(app);
}

/** Calls to `app` (its owner closes it), each answer checked against the OpenAPI document it serves. */
export function apiOver(app: FastifyInstance): TestApi {
  return {
    app,
    async request(options) {
      const { key, ...rest } = options;
      const headers = { ...(rest.headers ?? {}), ...(key ? { authorization: `Bearer ${key}` } : {}) };
      const response = await app.inject({ ...rest, headers });
      await checkAgainstOpenApi(app, rest.method ?? "GET", String(rest.url), response);
      return response;
    },
  };
}

export type { Limits };
