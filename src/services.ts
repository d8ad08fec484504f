import { randomBytes } from "node:crypto";
import type { Principal } from "./auth/key.service.js";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import { type Db, type Dialect, migrateToLatest, openStorage, type Storage } from "./db/database.js";
import { ensureSetting } from "./db/settings.store.js";
import { LimitsService } from "./limits/limits.service.js";

/** Everything the use cases need, built once and handed to routes and commands. */
export interface Services {
  config: Readonly<Config>;
  db: Db;
  dialect: Dialect;
  clock: Clock;
  limits: LimitsService;
  /** HMAC key for list cursors, shared by every process through the database. */
  cursorKey: Buffer;
  close(): Promise<void>;
}

/** The request's view of the services: who is asking, and the tool store to use. */
export interface RequestContext {
  services: Services;
  principal: Principal;
}

export async function createServices(config: Readonly<Config>, options: { clock: Clock; storage?: Storage }): Promise<Services> {
  const storage = options.storage ?? openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const cursorSecret = await ensureSetting(storage.db, "cursor_hmac_key", () => randomBytes(32).toString("base64"));
    return {
      config,
      db: storage.db,
      dialect: storage.dialect,
      clock: options.clock,
      limits: new LimitsService(config.limits),
      cursorKey: Buffer.from(cursorSecret, "base64"),
      close: () => storage.close(),
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}
