import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Actor, ActorOrigin } from "./audit/audit.store.js";
import { forgetAuthVersion } from "./auth/key.store.js";
import { watchKeys } from "./auth/key-watch.js";
import type { Principal } from "./auth/principal.js";
import { AccessWatch, DEFAULT_ACCESS_WATCH_OPTIONS } from "./client/access-watch.js";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import { AnswerCache } from "./customers/answer-cache.js";
import { type Db, type Dialect, migrateToLatest, openStorage, type Storage } from "./db/database.js";
import { ensureSetting } from "./db/settings.store.js";
import type { DatabaseAvailability } from "./db/storage-faults.js";
import { ActivityCounter } from "./insights/activity.js";
import { LimitsService } from "./limits/limits.service.js";
import type { MetricsRecorder } from "./ops/metrics.js";
import { readDeliveryFigures } from "./ops/ops.store.js";
import { ensureSigningKey, SigningKeys } from "./tokens/signing-key.service.js";
import { SecretBox } from "./webhooks/secret-box.js";
import { KnownTools } from "./workspaces/known-tools.js";

/** Everything the use cases need, built once and handed to routes and commands. */
export interface Services {
  config: Readonly<Config>;
  db: Db;
  dialect: Dialect;
  /** Whether the database answers, as the statements find it: `warden serve` logs its changes. */
  availability: DatabaseAvailability;
  clock: Clock;
  limits: LimitsService;
  /** HMAC key for list cursors, shared by every process through the database. */
  cursorKey: Buffer;
  /** Seals secrets at rest under WARDEN_SECRET_KEY. */
  secretBox: SecretBox;
  /** The key that signs access tokens and the JWK Set, read again every minute. */
  signingKeys: SigningKeys;
  signals: Signals;
  /** Tools known to exist (they are never removed), checked without a query. */
  knownTools: KnownTools;
  /** The process's figures for GET /metrics, on a registry of these services' own (a command's are dropped: QuietMetrics). */
  metrics: MetricsRecorder;
  /** The devices waiting for an access change, and the loop that wakes them (started by `warden serve`). */
  accessWatch: AccessWatch;
  /** What retrieves and access checks read, kept while the access-change feed is read (customers/answer-cache.ts). */
  answers: AnswerCache;
  /** The access checks' days, written for the use figures once a second (insights/activity.ts). */
  activity: ActivityCounter;
  close(): Promise<void>;
}

/** The request's view of the services: who is asking, and the tool store to use. */
export interface RequestContext {
  services: Services;
  principal: Principal;
  /** The signed-in owner when the request comes from the dashboard: their changes are audited. */
  actor?: Actor;
  /** Where an API request came from (the dashboard's is on `actor`), for the owners' notification mails. */
  from?: ActorOrigin;
}

/** In-process nudges: an event (or a mail) was written, so the delivery worker (or the mail sender) should look now rather than at its next poll. */
export class Signals {
  private readonly deliveryListeners = new Set<() => void>();
  private readonly mailListeners = new Set<() => void>();

  onDelivery(listener: () => void): () => void {
    this.deliveryListeners.add(listener);
    return () => this.deliveryListeners.delete(listener);
  }

  wakeDelivery(): void {
    for (const listener of this.deliveryListeners) listener();
  }

  onMail(listener: () => void): () => void {
    this.mailListeners.add(listener);
    return () => this.mailListeners.delete(listener);
  }

  wakeMail(): void {
    for (const listener of this.mailListeners) listener();
  }
}

/**
 * Without WARDEN_SECRET_KEY a key is made once and kept in the data folder, so a local
 * start just works. Production sets WARDEN_SECRET_KEY (the README says so): a key beside
 * the database it protects protects little, and several processes must share one key.
 */
async function loadDevelopmentSecretKey(dataDir: string): Promise<string> {
  const file = join(dataDir, "secret.key");
  try {
    return (await readFile(file, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32).toString("base64");
  try {
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return (await readFile(file, "utf8")).trim();
    throw error;
  }
}

/**
 * `statementTimeoutMs` bounds every statement once migrated (Storage.boundStatements), and
 * `checkpointInBackground` moves SQLite's log checkpoints to a worker thread
 * (Storage.checkpointInBackground): `warden serve` sets both.
 */
export async function createServices(
  config: Readonly<Config>,
  options: { clock: Clock; storage?: Storage; statementTimeoutMs?: number; checkpointInBackground?: boolean; metrics?: MetricsRecorder },
): Promise<Services> {
  // prom-client, and the OpenTelemetry API it loads, are ~90 modules: imported only when the
  // figures are kept, so that a command starts without them (issue 49).
  const metrics = options.metrics ?? new (await import("./ops/metrics.js")).Metrics();
  const storage =
    options.storage ??
    openStorage({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      sqliteMmapMb: config.sqliteMmapMb,
      onStatementError: () => metrics.countStatementError(),
      onUnavailable: () => metrics.countUnavailable(),
    });
  metrics.readFrom({ deliveries: () => readDeliveryFigures(storage.db), pool: storage.poolStats ?? null });
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const cursorSecret = await ensureSetting(storage.db, "cursor_hmac_key", () => randomBytes(32).toString("base64"));
    const secretBox = new SecretBox(config.secretKey ?? (await loadDevelopmentSecretKey(config.dataDir)));
    await ensureSigningKey(storage.db, secretBox, options.clock.now());
    if (options.statementTimeoutMs !== undefined) storage.boundStatements(options.statementTimeoutMs);
    if (options.checkpointInBackground) storage.checkpointInBackground();
    const limits = new LimitsService(config.limits, storage.dialect, options.clock);
    metrics.readHeldCounts(() => limits.heldCounters);
    metrics.readQuotaLeases(() => limits.leaseFigures);
    const answers = new AnswerCache(config.cacheMb * 1024 * 1024, options.clock);
    metrics.readAnswerCache(() => answers.stats);
    const accessWatch = new AccessWatch(storage.db, options.clock, DEFAULT_ACCESS_WATCH_OPTIONS, {
      started: () => answers.start(),
      turn: () => watchKeys(storage.db, limits, options.clock),
      read(changes) {
        for (const change of changes) answers.changed(change.workspaceId, change.env, [change.personId]);
        answers.listen(true);
      },
      lost() {
        answers.listen(false);
        forgetAuthVersion(storage.db);
      },
    });
    metrics.readAccessWaiters(() => accessWatch.size);
    const activity = new ActivityCounter(storage.db);
    return {
      config,
      db: storage.db,
      dialect: storage.dialect,
      availability: storage.availability,
      clock: options.clock,
      limits,
      cursorKey: Buffer.from(cursorSecret, "base64"),
      secretBox,
      signingKeys: new SigningKeys(storage.db, secretBox, options.clock),
      signals: new Signals(),
      knownTools: new KnownTools(),
      metrics,
      accessWatch,
      answers,
      activity,
      async close() {
        answers.close();
        // The days noted in the last second: one last try, as for the leased blocks.
        await activity.close().catch(() => {});
        // Leased blocks go back for other processes; counts held while the storage was full
        // are lost with the process: one last try.
        await limits.close(storage.db, options.clock.now()).catch(() => false);
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
