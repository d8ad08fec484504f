import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import SQLite from "better-sqlite3";
import { ConfigError, parseConfig } from "./config.js";

describe("config", () => {
  test("the default limits are the specified figures", () => {
    assert.deepEqual(parseConfig({}).limits, {
      keyRequestsPerMin: 600,
      wrongKeysPerMin: 30,
      listPagesPerMin: 30,
      rowsReadPerDay: 300_000,
      lookupsPerDay: 20_000,
      grantsPerToolPerDay: 1_000,
      additionsPerDay: 20_000,
      hobbyPasses: 100,
      exampleEventsPerDay: 100,
      signInsPerAddressPerHour: 5,
      signInsPerSourcePerHour: 30,
      confirmationsPerSessionPerHour: 20,
      devicesPerLicence: 5,
      pageTicketsPerDevicePerMin: 30,
    });
  });

  test("every limit can be lowered through its variable", () => {
    const limits = parseConfig({
      WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "1",
      WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "2",
      WARDEN_LIMIT_LIST_PAGES_PER_MIN: "3",
      WARDEN_LIMIT_ROWS_READ_PER_DAY: "4",
      WARDEN_LIMIT_LOOKUPS_PER_DAY: "5",
      WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: "6",
      WARDEN_LIMIT_ADDITIONS_PER_DAY: "7",
      WARDEN_LIMIT_HOBBY_PASSES: "8",
      WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "9",
      WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "10",
      WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR: "11",
      WARDEN_LIMIT_CONFIRMATIONS_PER_SESSION_PER_HOUR: "12",
      WARDEN_LIMIT_DEVICES_PER_LICENCE: "13",
      WARDEN_LIMIT_PAGE_TICKETS_PER_DEVICE_PER_MIN: "14",
    }).limits;
    assert.deepEqual(Object.values(limits), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  test("by default: port 8080 on 127.0.0.1, SQLite, no domain, no trusted proxy; the configuration is frozen", () => {
    const config = parseConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.databaseUrl, null);
    assert.equal(config.domain, null);
    assert.equal(config.trustProxy, false);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.limits));
  });

  test("bad values are refused with the variable's name", () => {
    for (const [name, value] of [
      ["WARDEN_LIMIT_LOOKUPS_PER_DAY", "-1"],
      ["WARDEN_LIMIT_LOOKUPS_PER_DAY", "1.5"],
      ["WARDEN_LIMIT_LOOKUPS_PER_DAY", "lots"],
      ["PORT", "70000"],
      ["DATABASE_URL", "mysql://x"],
      ["WARDEN_DOMAIN", ".warden.test"],
      ["WARDEN_DOMAIN", "warden test"],
      ["WARDEN_TRUST_PROXY", "yes"],
      ["WARDEN_TRUST_PROXY", "11"],
      ["SMTP_URL", "mail.example.com"],
      ["WARDEN_CLIENT_ORIGINS", "https://app.example.com/path"],
    ] as const) {
      assert.throws(
        () => parseConfig({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
        `${name}=${value}`,
      );
    }
  });

  test("WARDEN_PUBLIC_URL: an origin, required in production, else the local server's address", () => {
    assert.equal(parseConfig({}).publicUrl, "http://127.0.0.1:8080");
    assert.equal(parseConfig({ HOST: "0.0.0.0", PORT: "9000" }).publicUrl, "http://localhost:9000");
    assert.equal(parseConfig({ WARDEN_PUBLIC_URL: "https://warden.example.com/", NODE_ENV: "production" }).publicUrl, "https://warden.example.com");
    assert.throws(
      () => parseConfig({ NODE_ENV: "production" }),
      (e: Error) => e instanceof ConfigError && /WARDEN_PUBLIC_URL is required in production/.test(e.message),
    );
    for (const bad of ["warden.example.com", "https://warden.example.com/dashboard", "ftp://warden.example.com"]) {
      assert.throws(
        () => parseConfig({ WARDEN_PUBLIC_URL: bad }),
        (e: Error) => e instanceof ConfigError && /WARDEN_PUBLIC_URL must be an origin/.test(e.message),
        bad,
      );
    }
  });

  test("WARDEN_DOMAIN is kept lower-case", () => {
    assert.equal(parseConfig({ WARDEN_DOMAIN: " Warden.Example.COM " }).domain, "warden.example.com");
  });

  test("WARDEN_TRUST_PROXY=true believes only the hop that the one proxy appended", () => {
    for (const off of ["", "false", "0"]) assert.equal(parseConfig({ WARDEN_TRUST_PROXY: off }).trustProxy, false);
    const one = parseConfig({ WARDEN_TRUST_PROXY: "true" }).trustProxy;
    assert.ok(one);
    // Hop 0 is the socket (the proxy), hop 1 the address it appended, hop 2 the client's own claim.
    assert.deepEqual(
      [0, 1, 2].map((hop) => one("10.0.0.1", hop)),
      [true, false, false],
    );
    const oneByNumber = parseConfig({ WARDEN_TRUST_PROXY: "1" }).trustProxy;
    assert.ok(oneByNumber);
    assert.deepEqual(
      [0, 1, 2].map((hop) => oneByNumber("10.0.0.1", hop)),
      [true, false, false],
    );
    const two = parseConfig({ WARDEN_TRUST_PROXY: "2" }).trustProxy;
    assert.ok(two);
    assert.deepEqual(
      [0, 1, 2].map((hop) => two("10.0.0.1", hop)),
      [true, true, false],
    );
  });

  test("webhook settings: secret key length, private webhooks, the delivery worker and its lease", () => {
    const defaults = parseConfig({});
    assert.deepEqual([defaults.secretKey, defaults.allowPrivateWebhooks, defaults.deliveryWorker, defaults.deliveryLeaseMs], [null, false, true, 60_000]);
    const set = parseConfig({
      WARDEN_SECRET_KEY: "k".repeat(32),
      WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1",
      WARDEN_DELIVERY_WORKER: "0",
      WARDEN_DELIVERY_LEASE_MS: "2000",
    });
    assert.deepEqual([set.secretKey, set.allowPrivateWebhooks, set.deliveryWorker, set.deliveryLeaseMs], ["k".repeat(32), true, false, 2000]);
    assert.throws(() => parseConfig({ WARDEN_SECRET_KEY: "short" }), /at least 32 characters/);
    assert.throws(() => parseConfig({ WARDEN_ALLOW_PRIVATE_WEBHOOKS: "yes" }), /WARDEN_ALLOW_PRIVATE_WEBHOOKS/);
    assert.throws(() => parseConfig({ WARDEN_DELIVERY_LEASE_MS: "999" }), /WARDEN_DELIVERY_LEASE_MS must be between 1000 and 3600000/);
    assert.throws(() => parseConfig({ WARDEN_DELIVERY_LEASE_MS: "3600001" }), /WARDEN_DELIVERY_LEASE_MS/);
  });

  test("LOG_LEVEL is one of pino's levels; WARDEN_METRICS_TOKEN unset or 16+ characters", () => {
    assert.equal(parseConfig({}).logLevel, "info");
    assert.equal(parseConfig({ LOG_LEVEL: "warn" }).logLevel, "warn");
    assert.throws(() => parseConfig({ LOG_LEVEL: "verbose" }), /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/);
    assert.equal(parseConfig({}).metricsToken, null);
    assert.equal(parseConfig({ WARDEN_METRICS_TOKEN: "t".repeat(16) }).metricsToken, "t".repeat(16));
    assert.throws(() => parseConfig({ WARDEN_METRICS_TOKEN: "short" }), /WARDEN_METRICS_TOKEN must be at least 16 characters/);
  });

  test("WARDEN_SQLITE_MMAP_MB: 0 unless given, up to SQLite's 2047", () => {
    assert.equal(parseConfig({}).sqliteMmapMb, 0);
    assert.equal(parseConfig({ WARDEN_SQLITE_MMAP_MB: "1024" }).sqliteMmapMb, 1024);
    assert.throws(() => parseConfig({ WARDEN_SQLITE_MMAP_MB: "2048" }), /WARDEN_SQLITE_MMAP_MB must be between 0 and 2047/);
    assert.throws(() => parseConfig({ WARDEN_SQLITE_MMAP_MB: "1g" }), /WARDEN_SQLITE_MMAP_MB must be a whole number/);
  });

  test("WARDEN_DB_WAIT_SECONDS: a minute unless given, 0 for no wait, at most an hour", () => {
    assert.equal(parseConfig({}).dbWaitSeconds, 60);
    assert.equal(parseConfig({ WARDEN_DB_WAIT_SECONDS: "0" }).dbWaitSeconds, 0);
    assert.equal(parseConfig({ WARDEN_DB_WAIT_SECONDS: "15" }).dbWaitSeconds, 15);
    assert.throws(() => parseConfig({ WARDEN_DB_WAIT_SECONDS: "3601" }), /WARDEN_DB_WAIT_SECONDS must be between 0 and 3600/);
    assert.throws(() => parseConfig({ WARDEN_DB_WAIT_SECONDS: "10s" }), /WARDEN_DB_WAIT_SECONDS must be a whole number/);
  });

  test("the Stripe API address: unset is Stripe's own; else an http(s) origin", () => {
    assert.equal(parseConfig({}).stripeApiUrl, null);
    assert.equal(parseConfig({ WARDEN_STRIPE_API_URL: "http://127.0.0.1:12111" }).stripeApiUrl, "http://127.0.0.1:12111");
    assert.equal(parseConfig({ WARDEN_STRIPE_API_URL: "https://stripe.internal/" }).stripeApiUrl, "https://stripe.internal");
    assert.throws(() => parseConfig({ WARDEN_STRIPE_API_URL: "stripe" }), /WARDEN_STRIPE_API_URL must be a URL/);
    assert.throws(() => parseConfig({ WARDEN_STRIPE_API_URL: "ftp://x" }), /http\(s\) address/);
    assert.throws(() => parseConfig({ WARDEN_STRIPE_API_URL: "http://x/v1" }), /no path/);
    assert.equal(parseConfig({}).stripeReconcileMinutes, 0);
    assert.equal(parseConfig({ WARDEN_STRIPE_RECONCILE_MINUTES: "60" }).stripeReconcileMinutes, 60);
    assert.throws(() => parseConfig({ WARDEN_STRIPE_RECONCILE_MINUTES: "2" }), /0 \(off\) or at least 5/);
    assert.throws(() => parseConfig({ WARDEN_STRIPE_RECONCILE_MINUTES: "hourly" }), /whole number/);
  });

  test("the Paddle API address: unset is Paddle's own; else an http(s) origin", () => {
    assert.equal(parseConfig({}).paddleApiUrl, null);
    assert.equal(parseConfig({ WARDEN_PADDLE_API_URL: "https://paddle.internal/" }).paddleApiUrl, "https://paddle.internal");
    assert.throws(() => parseConfig({ WARDEN_PADDLE_API_URL: "paddle" }), /WARDEN_PADDLE_API_URL must be a URL/);
    assert.throws(() => parseConfig({ WARDEN_PADDLE_API_URL: "http://x/v1" }), /WARDEN_PADDLE_API_URL must be an http\(s\) address with no path/);
    assert.equal(parseConfig({}).paddleReconcileMinutes, 0);
    assert.equal(parseConfig({ WARDEN_PADDLE_RECONCILE_MINUTES: "60" }).paddleReconcileMinutes, 60);
    assert.throws(() => parseConfig({ WARDEN_PADDLE_RECONCILE_MINUTES: "2" }), /WARDEN_PADDLE_RECONCILE_MINUTES must be 0 \(off\) or at least 5/);
  });
});

test("with neither DATABASE_URL nor WARDEN_DATA_DIR the database is ./data/warden.sqlite of the working directory", async () => {
  const cwd = await mkdtemp(join(tmpdir(), "warden-cwd-"));
  try {
    const { DATABASE_URL: _url, WARDEN_DATA_DIR: _dir, ...env } = process.env;
    // A process of its own, as an operator runs the CLI: the default path is relative to
    // the process's working directory, which a test must not change under its siblings.
    const cli = pathToFileURL(join(import.meta.dirname, "cli.ts")).href;
    const email = "default-location@example.com";
    const script = `const { main } = await import(${JSON.stringify(cli)}); process.exitCode = await main(["admin", "owner", "create", "--email", ${JSON.stringify(email)}, "--json"]);`;
    // tsx is resolved here: the temporary directory has no node_modules to find it in.
    const tsx = import.meta.resolve("tsx");
    await promisify(execFile)(process.execPath, ["--import", tsx, "--input-type=module", "-e", script], { cwd, env });

    const database = new SQLite(join(cwd, "data", "warden.sqlite"), { readonly: true, fileMustExist: true });
    try {
      assert.deepEqual(database.prepare("select email from owners").all(), [{ email }]);
    } finally {
      database.close();
    }
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});
