import type { FastifyBaseLogger } from "fastify";
import { SESSION_MAX_MS } from "../auth/web-session.js";
import { DAY_MS } from "../clock.js";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { IDEMPOTENCY_WINDOW_MS } from "../grants/idempotency.js";
import { RepeatingJob } from "../ops/repeating-job.js";
import type { Services } from "../services.js";
import {
  checkpointLog,
  deleteAccessChanges,
  deleteCustomerSessions,
  deleteExchangeTokens,
  deleteIdempotencyKeys,
  deletePaddleCheckouts,
  deletePaddleEvents,
  deleteSentMails,
  deleteSettledDeliveries,
  deleteSignInCodes,
  deleteSpentCounters,
  deleteStripeEvents,
  deleteUndeliveredEvents,
} from "./retention.store.js";

/** Rows deleted by one pruning run, by what they were. */
export interface Pruned {
  deliveries: number;
  events: number;
  stripeEvents: number;
  paddleEvents: number;
  paddleCheckouts: number;
  idempotencyKeys: number;
  signInCodes: number;
  sentMails: number;
  customerSessions: number;
  exchangeTokens: number;
  counters: number;
  accessChanges: number;
}

interface PruneOptions {
  /** Rows a statement deletes at most: each batch is a short transaction, so no writer waits long. */
  batchSize: number;
  /** Shortest pause between two batches, so that requests get the database in between (0 in tests: no pause). */
  pauseMs: number;
  /**
   * The pause is also at least this many times the batch's own duration, so that pruning
   * takes a bounded share of the process's time however slow the machine (199: a two-hundredth).
   */
  pauseFactor: number;
  /** Asked between batches: true stops the run where it is (the server is closing). */
  stopped?: () => boolean;
}

interface PrunerOptions extends PruneOptions {
  /** Time between the end of one run and the start of the next. */
  intervalMs: number;
}

// 500 rows a statement. On SQLite, pruning runs on the thread that answers requests, and
// a batch's cost is mostly fixed: at 1M events (2026-11-26, on a copy of bench/retention.ts's
// database) 500 settled deliveries and their attempts took 5 ms to delete, 1 to 3 ms to
// commit and 5 to 6 ms to checkpoint the log (its fsync), against 0.6, 1 and 6 ms for 20:
// smaller batches would stall as long, more often. What bounds the effect on requests is
// the share of time pruning holds the thread. At a twentieth (pauseFactor 19), retrieve
// at 50 connections kept its requests/s but its p99 went from 9.0 to 13.3 ms and 9.4 to
// 12.1 ms (1.48 and 1.28 times). At a two-hundredth, on a quiet machine too, it went
// 14.36 → 14.51 ms and 12.71 → 11.28 ms (1.01 and 0.89 times: bench/README.md). The
// server then prunes some 180 deliveries a second (a 1M-event backlog in about 95
// minutes; up to 15M events a day in steady state).
const DEFAULT_PRUNER_OPTIONS: PrunerOptions = { batchSize: 500, pauseMs: 20, pauseFactor: 199, intervalMs: 10 * 60_000 };

// A sign-in code is dead 10 minutes after it was sent; the row is kept a day so that an
// operator can still see, that day, that a code went to an address.
const SIGN_IN_CODES_KEPT_MS = DAY_MS;
// A sent mail's row (its content already erased) answers "did the mail go out?" for a
// week: the time in which a person says they never got it.
const SENT_MAILS_KEPT_MS = 7 * DAY_MS;
// Windows close at the same instant for every process only as far as their clocks
// agree: an hour's margin keeps a window that one process still counts in.
const COUNTERS_KEPT_MS = 60 * 60_000;
// The access-change feed is read within seconds of each write (client/access-watch.ts);
// an hour covers a reader's longest gap wait many times over, and a restarted reader
// starts from the feed's end, not from what is kept.
const ACCESS_CHANGES_KEPT_MS = 60 * 60_000;

// A run that found the database unreachable is tried again after this, not a whole
// interval later: what it left is deleted by the next run either way.
const RETRY_UNAVAILABLE_MS = 30_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Deletes what Warden no longer needs, oldest first, a batch at a time until none is
 * left: events, deliveries and attempts, Stripe's and Paddle's event ids and Paddle checkouts older than the retention
 * (WARDEN_RETENTION_DAYS; never a pending delivery nor an event a delivery still refers
 * to, nor a Stripe event held back), idempotency keys past their window, expired sign-in
 * codes, mails sent over a week ago, the hosted pages' sessions past their 7 days and
 * their expired one-time tokens, and closed limit windows. Licences, subscriptions, grants, people and devices
 * are what access is made of, and are never pruned.
 */
export async function pruneExpired(services: Pick<Services, "db" | "clock" | "config">, options: PruneOptions): Promise<Pruned> {
  const { db, config } = services;
  const now = services.clock.now();
  const retainedFrom = config.retentionDays > 0 ? now - config.retentionDays * DAY_MS : null;
  const pruned: Pruned = {
    deliveries: 0,
    events: 0,
    stripeEvents: 0,
    paddleEvents: 0,
    paddleCheckouts: 0,
    idempotencyKeys: 0,
    signInCodes: 0,
    sentMails: 0,
    customerSessions: 0,
    exchangeTokens: 0,
    counters: 0,
    accessChanges: 0,
  };

  const inBatches = async (what: keyof Pruned, batch: (limit: number) => Promise<number>) => {
    for (;;) {
      if (options.stopped?.()) return;
      const started = performance.now();
      const n = await batch(options.batchSize);
      await checkpointLog(db);
      pruned[what] += n;
      if (n < options.batchSize) return;
      if (options.pauseMs > 0) await pause(Math.max(options.pauseMs, (performance.now() - started) * options.pauseFactor));
    }
  };

  if (retainedFrom !== null) {
    const before = retainedFrom;
    // Deliveries before events: an event goes only once no delivery refers to it.
    await inBatches("deliveries", (limit) => db.transaction().execute((trx) => deleteSettledDeliveries(trx, before, limit)));
    // Without JIT, as every statement on PostgreSQL (db/database.ts): its estimate of the events' filtered scan passed JIT's threshold.
    await inBatches("events", (limit) => db.transaction().execute((trx) => deleteUndeliveredEvents(trx, before, limit)));
    await inBatches("stripeEvents", (limit) => deleteStripeEvents(db, before, limit));
    await inBatches("paddleEvents", (limit) => deletePaddleEvents(db, before, limit));
    await inBatches("paddleCheckouts", (limit) => deletePaddleCheckouts(db, before, limit));
  }
  await inBatches("idempotencyKeys", (limit) => deleteIdempotencyKeys(db, now - IDEMPOTENCY_WINDOW_MS, limit));
  await inBatches("signInCodes", (limit) => deleteSignInCodes(db, now - SIGN_IN_CODES_KEPT_MS, limit));
  await inBatches("sentMails", (limit) => deleteSentMails(db, now - SENT_MAILS_KEPT_MS, limit));
  // Kept a day past their end, as sign-in codes are, for an operator looking at that day.
  await inBatches("customerSessions", (limit) => deleteCustomerSessions(db, now - SESSION_MAX_MS - DAY_MS, limit));
  await inBatches("exchangeTokens", (limit) => deleteExchangeTokens(db, now - DAY_MS, limit));
  await inBatches("counters", (limit) => deleteSpentCounters(db, now - COUNTERS_KEPT_MS, limit));
  await inBatches("accessChanges", (limit) => deleteAccessChanges(db, now - ACCESS_CHANGES_KEPT_MS, limit));
  return pruned;
}

/**
 * Prunes in the background of `warden serve`: a run at start, then one every
 * `intervalMs` after the last ended. Every process may run one: on PostgreSQL two runs
 * at once take different rows, on SQLite their batches take turns. Its stop() ends the
 * run under way between two batches.
 */
export function retentionPruner(services: Services, log: FastifyBaseLogger, options: PrunerOptions = DEFAULT_PRUNER_OPTIONS): RepeatingJob {
  return new RepeatingJob(
    async (stopped) => {
      try {
        const pruned = await pruneExpired(services, { ...options, stopped });
        if (Object.values(pruned).some((n) => n > 0)) log.info({ pruned }, "pruned expired rows");
      } catch (error) {
        // An unreachable database is logged once by `warden serve`, not here.
        if (isDatabaseUnavailable(error)) return "unreachable";
        log.error({ err: error }, "pruning failed");
      }
      return "done";
    },
    { firstDelayMs: 0, intervalMs: options.intervalMs, retryMs: RETRY_UNAVAILABLE_MS },
  );
}
