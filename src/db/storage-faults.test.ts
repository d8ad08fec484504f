import assert from "node:assert/strict";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { buildApp } from "../app.js";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { createServices } from "../services.js";
import { createPgSchema, DIALECTS, PG_URL, seedWorkspace, testServices, unique } from "../test-support/harness.js";
import { CONNECT_TIMEOUT_MS, openStorage } from "./database.js";
import { DatabaseAvailability, DatabaseUnavailableError, isDatabaseUnavailable, isUnreachableDriverError } from "./storage-faults.js";

/**
 * PostgreSQL behind a TCP relay that the test can cut (connections reset, new ones
 * refused: a server that stops) or stall (bytes go nowhere: a network that drops them),
 * and open again: an outage of the shared test server, for this file alone.
 */
class PgRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  port = 0;

  async open(): Promise<void> {
    await this.cut();
    this.stalled = false;
    const server = createServer((client) => {
      this.sockets.add(client);
      client.on("close", () => this.sockets.delete(client));
      client.on("error", () => {});
      const upstream = tcpConnect(5432, "127.0.0.1");
      this.sockets.add(upstream);
      upstream.on("close", () => this.sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
      client.on("data", (chunk) => {
        if (!this.stalled) upstream.write(chunk);
      });
      upstream.on("data", (chunk) => {
        if (!this.stalled) client.write(chunk);
      });
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Resets every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Keeps every connection open but answers nothing. */
  stall(): void {
    this.stalled = true;
  }
}

async function servicesBehind(relay: PgRelay, clock = new ManualClock()) {
  const schema = await createPgSchema();
  const url = `postgres://postgres@127.0.0.1:${relay.port}/test?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const config = parseConfig({ DATABASE_URL: url, WARDEN_DOMAIN: "warden.test", WARDEN_SECRET_KEY: "storage-faults-secret-0123456789abcdefgh" });
  return createServices(config, { clock, statementTimeoutMs: 1_000 });
}

describe("storage faults: which errors are the database being away", () => {
  test("the driver's words and codes for a server that is away, and not a bad statement's", () => {
    const errno = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });
    for (const error of [
      errno("ECONNREFUSED"),
      errno("ECONNRESET"),
      errno("ETIMEDOUT"),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
      Object.assign(new Error("could not receive data"), { code: "08006" }),
      new Error("Connection terminated unexpectedly"),
      new Error("Connection terminated due to connection timeout"),
      new Error("timeout exceeded when trying to connect"),
      new Error("timeout expired"),
      new Error("Query read timeout"),
      new AggregateError([errno("ECONNREFUSED"), errno("ECONNREFUSED")], ""),
    ]) {
      assert.equal(isUnreachableDriverError(error), true, error.message);
    }
    for (const error of [
      Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: "23505" }),
      Object.assign(new Error("syntax error at or near"), { code: "42601" }),
      Object.assign(new Error("password authentication failed"), { code: "28P01" }),
      Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }),
      new TypeError("x is undefined"),
      "a string",
      null,
    ]) {
      assert.equal(isUnreachableDriverError(error), false, String(error));
    }
  });

  test("a DatabaseUnavailableError is found through the causes that wrap it, and keeps the cause's code", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const unavailable = new DatabaseUnavailableError(cause);
    assert.equal(unavailable.code, "ECONNREFUSED");
    assert.match(unavailable.message, /^the database is unreachable: connect ECONNREFUSED/);
    assert.equal(isDatabaseUnavailable(unavailable), true);
    assert.equal(isDatabaseUnavailable(new Error("database migration 001 failed", { cause: unavailable })), true);
    // The raw driver error is classified where it is thrown (database.ts), not everywhere.
    assert.equal(isDatabaseUnavailable(cause), false);
    assert.equal(isDatabaseUnavailable(new Error("other")), false);
  });

  test("availability tells its listeners once when the database goes and once when it is back, and counts every failure", () => {
    let failures = 0;
    const changes: boolean[] = [];
    const availability = new DatabaseAvailability(() => failures++);
    availability.onChange((available) => changes.push(available));
    availability.succeeded(availability.begin());
    const underWay = availability.begin();
    for (let i = 0; i < 5; i++) availability.failed(new Error("down"));
    assert.equal(availability.isAvailable, false);
    // A statement begun before the failure finishes: that says nothing of the database now.
    availability.succeeded(underWay);
    assert.deepEqual(changes, [false]);
    for (let i = 0; i < 3; i++) availability.succeeded(availability.begin());
    availability.failed(new Error("down again"));
    assert.deepEqual(changes, [false, true, false]);
    assert.equal(failures, 6);
  });
});

for (const dialect of DIALECTS) {
  describe(`storage faults (${dialect})`, () => {
    test("a statement that fails on its own merits is not the database being away", async () => {
      const { services } = await testServices(dialect);
      const scope = unique("scope");
      await services.db.insertInto("counters").values({ scope, window_end: 1, count: 1 }).execute();
      const duplicate = await services.db
        .insertInto("counters")
        .values({ scope, window_end: 1, count: 1 })
        .execute()
        .catch((error: unknown) => error);
      assert.ok(duplicate instanceof Error);
      assert.equal(isDatabaseUnavailable(duplicate), false);
      assert.equal(services.availability.isAvailable, true);
    });
  });
}

describe("storage faults: PostgreSQL going away and coming back (postgres)", () => {
  test("a server that stops: no crash, 503 database_unavailable with Retry-After at once, /readyz 503, /healthz 200, the metric; back without a restart", async () => {
    const relay = new PgRelay();
    await relay.open();
    const clock = new ManualClock();
    const services = await servicesBehind(relay, clock);
    const changes: boolean[] = [];
    services.availability.onChange((available) => changes.push(available));
    const ws = await seedWorkspace(services);
    const app = await buildApp(services, { logger: false });
    await app.ready();
    const retrieve = () =>
      app.inject({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent("ada@example.com")}`, headers: { authorization: `Bearer ${ws.testKey}` } });
    const grant = (email = `${unique("c")}@example.com`) =>
      app.inject({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        headers: { authorization: `Bearer ${ws.testKey}` },
        payload: { email, days: 30 },
      });
    try {
      assert.equal((await grant("ada@example.com")).statusCode, 201);
      assert.equal((await retrieve()).statusCode, 200);
      // Connections checked out while the server goes: their 'error' event must be handled.
      const held = services.db.connection().execute(async (conn) => {
        await sql`select 1`.execute(conn);
        await relay.cut();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return sql`select 1`.execute(conn).catch((error: unknown) => error);
      });
      assert.ok(isDatabaseUnavailable(await held), "a statement on a connection the server dropped");
      for (const request of [retrieve, () => grant(), retrieve, () => grant()]) {
        const started = performance.now();
        const answer = await request();
        assert.ok(performance.now() - started < 2_000, "answered within 2 s");
        assert.equal(answer.statusCode, 503, answer.body);
        assert.equal(answer.headers["retry-after"], "5");
        assert.deepEqual(answer.json(), { error: { type: "api_error", message: "The database is unreachable; retry in a few seconds." } });
      }
      clock.advance(1_000);
      assert.equal((await app.inject({ url: "/readyz" })).statusCode, 503);
      assert.equal((await app.inject({ url: "/healthz" })).statusCode, 200);
      assert.deepEqual(changes, [false]);
      const failures = Number(/^warden_db_unavailable_total (\d+)$/m.exec(await services.metrics.render())?.[1]);
      assert.ok(failures >= 5, `warden_db_unavailable_total ${failures}`);

      await relay.open();
      const back = await grant();
      assert.equal(back.statusCode, 201, back.body);
      assert.equal((await retrieve()).statusCode, 200);
      clock.advance(1_000);
      assert.equal((await app.inject({ url: "/readyz" })).statusCode, 200);
      assert.deepEqual(changes, [false, true]);
    } finally {
      await app.close();
      await services.close();
      await relay.cut();
    }
  });

  test("waiting longer than the connection's bound for a busy pool's one connection is no outage: the statement runs when it is free", async () => {
    const storage = openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 1 });
    try {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holder = storage.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await held;
      });
      const waiter = sql<{ one: number }>`select 1 as one`.execute(storage.db);
      // Held past the bound a new connection has (pg-pool's wait runs on real time): the waiter is still queued, not failed.
      await new Promise((resolve) => setTimeout(resolve, CONNECT_TIMEOUT_MS + 500));
      release();
      await holder;
      assert.deepEqual((await waiter).rows, [{ one: 1 }]);
      assert.equal(storage.availability.isAvailable, true);
    } finally {
      await storage.close();
    }
  });

  test("while the database is known to be away, a wait for a busy pool's connection ends at the connection's bound, as 503", async () => {
    const storage = openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 1 });
    try {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holder = storage.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await held;
      });
      // As a statement that met a server gone away tells it.
      storage.availability.failed(new DatabaseUnavailableError(new Error("connect ECONNREFUSED")));
      const started = performance.now();
      const waited = await sql`select 1`.execute(storage.db).catch((error: unknown) => error);
      const ms = performance.now() - started;
      assert.ok(isDatabaseUnavailable(waited), String(waited));
      assert.ok(
        ms >= CONNECT_TIMEOUT_MS - 100 && ms < 8_000,
        `ended at the connection's bound, well before the 10 s a live database's pool may keep it: ${ms} ms`,
      );
      release();
      await holder;
      // The connection the abandoned wait would have had is back in the pool.
      assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(storage.db)).rows, [{ one: 1 }]);
    } finally {
      await storage.close();
    }
  });

  test("a server that stops answering: a statement fails at its bound and a connection at 2 s, as 503; its connection is not reused", async () => {
    const relay = new PgRelay();
    await relay.open();
    const services = await servicesBehind(relay);
    try {
      await sql`select 1`.execute(services.db);
      relay.stall();
      let started = performance.now();
      const hung = await sql`select 1`.execute(services.db).catch((error: unknown) => error);
      assert.ok(isDatabaseUnavailable(hung), String(hung));
      assert.ok(performance.now() - started < 1_900, `the statement's bound (1 s here): ${performance.now() - started} ms`);
      // A new connection cannot be made either: given up after CONNECT_TIMEOUT_MS.
      await relay.open();
      relay.stall();
      started = performance.now();
      const connecting = await sql`select 1`.execute(services.db).catch((error: unknown) => error);
      assert.ok(isDatabaseUnavailable(connecting), String(connecting));
      assert.ok(performance.now() - started < 3_000, `the connection's bound: ${performance.now() - started} ms`);
      await relay.open();
      assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(services.db)).rows, [{ one: 1 }]);
      assert.equal(services.availability.isAvailable, true);
    } finally {
      await services.close();
      await relay.cut();
    }
  });
});
