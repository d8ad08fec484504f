import type { FastifyBaseLogger } from "fastify";
import type { Executor, Trx } from "../db/database.js";
import { isDatabaseBusy, isDatabaseUnavailable } from "../db/storage-faults.js";
import { TransactionBatcher } from "../db/transaction-batch.js";
import { newOrderedId, randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { nextAttemptAfter, RETRY_DELAYS_MS } from "./delivery.schedule.js";
import {
  type AttemptOutcome,
  claimDueDeliveries,
  type DueDelivery,
  type DueEndpoint,
  failPendingDeliveries,
  findDueEndpoints,
  recordAttempts,
  releaseLeases,
  renewLease,
} from "./delivery.store.js";
import { recordEndpointFailure, recordEndpointSuccess, setEndpointEnabled, signingSecrets } from "./endpoint.store.js";
import { postWebhook, type SendResult } from "./sender.js";
import { webhookHeaders } from "./signature.js";

/** decisions.md: disabled after 5 days (120 h) without success since the first failure. */
export const DISABLE_AFTER_FAILING_MS = 120 * 3_600_000;
/** Time to record an attempt after it ends, on top of its timeout, before a lease must be renewed. */
const LEASE_MARGIN_MS = 5_000;
const SUCCESS_WRITE_INTERVAL_MS = 1_000;
/** How long before a streak could disable its endpoint the worker reads it from the database again. */
const FAILING_RECHECK_MS = 3_600_000;
/**
 * After a failed attempt, the endpoint's other deliveries wait this long (the schedule's
 * first retry delay), so a failing endpoint is tried with one delivery at a time, not
 * with every event as it comes: a receiver that is down costs the others almost nothing,
 * and one coming back up is not hit by the whole backlog's failures first. A manual
 * resend or recovery does not wait: the vendor asked for it now.
 */
const PAUSE_AFTER_FAILURE_MS = RETRY_DELAYS_MS[0] ?? 5_000;
/**
 * Attempts are recorded in batches gathered for this long (or up to RECORD_BATCH): a
 * sender goes on without waiting for its record, so the wait costs it nothing, and each
 * commit writes the pages its attempts share once. Scenario 5 on SQLite: 42 attempts a
 * commit instead of 10, 1.4 s of commits instead of 5.8 for 50,000 attempts.
 */
const RECORD_LINGER_MS = 10;
const RECORD_BATCH = 256;
/**
 * How long the worker waits before it looks for work again after the database was
 * unreachable: instead of every poll interval, and it does not log each try (the server
 * logs the outage once). A database back within this is used again within this.
 */
const UNAVAILABLE_RETRY_MS = 1_000;
/** Opened endpoint secrets kept in memory; past this many the cache starts again. */
const OPENED_SECRETS = 10_000;

export interface DeliveryWorkerOptions {
  /** Endpoints sent to at once by this process. */
  concurrency: number;
  pollIntervalMs: number;
  /** How long a claim leases its endpoint; the configuration's (WARDEN_DELIVERY_LEASE_MS, 60 s) when not given. */
  leaseMs?: number;
  timeoutMs: number;
  allowPrivate: boolean;
  /**
   * Deliveries of one endpoint read by a claim. Each claim is a transaction of its own
   * (when claims of 32 wrote each delivery's lease they cost 20 µs a delivery on SQLite,
   * a tenth of the worker's time); the endpoint is leased as a whole, so a larger claim
   * holds back nothing another worker could send meanwhile.
   */
  claimPerEndpoint: number;
  /** The source of each retry's jitter (0 ≤ r < 1); Math.random when not given. Tests fix it to know when a retry falls due. */
  random?: () => number;
}

export const DEFAULT_WORKER_OPTIONS: DeliveryWorkerOptions = {
  concurrency: 32,
  pollIntervalMs: 250,
  timeoutMs: 15_000,
  allowPrivate: false,
  claimPerEndpoint: 128,
};

/**
 * Sends due deliveries. An endpoint's work is claimed from the database with a lease on
 * the endpoint, so any number of processes can run a worker; a process killed
 * mid-attempt loses nothing, its lease runs out and the endpoint is claimed again. Each
 * endpoint's deliveries go one at a time in order of creation, different endpoints
 * concurrently, so a slow or dead endpoint only ever waits on itself.
 */
export class DeliveryWorker {
  private readonly workerId = `wkr_${randomBase62(12)}`;
  private readonly busy = new Set<string>();
  /** When this worker last wrote each endpoint's success (see recordEndpointSuccess). */
  private readonly successWritten = new Map<string, number>();
  /** Until when this worker leaves each endpoint that just failed alone (PAUSE_AFTER_FAILURE_MS). */
  private readonly pausedUntil = new Map<string, number>();
  /** The failing streak's start as this worker last recorded it, per endpoint, until its next success. */
  private readonly failingSince = new Map<string, number>();
  /** Endpoint secrets opened (AES-GCM) once, by their sealed form: a tenth of a delivery's CPU when opened per attempt. */
  private readonly openedSecrets = new Map<string, string>();
  /** Attempts that end within RECORD_LINGER_MS of each other are recorded together: one transaction, a few statements. */
  private readonly settles: TransactionBatcher<Attempted, Settled>;
  private readonly chains = new Set<Promise<void>>();
  private readonly leaseMs: number;
  private running = false;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(
    private readonly services: Services,
    private readonly log: FastifyBaseLogger,
    private readonly options: DeliveryWorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? services.config.deliveryLeaseMs;
    this.settles = new TransactionBatcher(services.db, (trx, attempts) => this.settle(trx, attempts), {
      maxBatch: RECORD_BATCH,
      lingerMs: RECORD_LINGER_MS,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.loop = this.run();
  }

  /**
   * Stops claiming and waits for the attempts under way to be recorded; the endpoints
   * leased are given back at once rather than held until their leases run out.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.wake();
    await this.loop;
    await Promise.all(this.chains);
  }

  /** Looks for work at once (called after an event is written in this process). */
  wake(): void {
    // Remembered when the loop is not asleep (it is claiming), so it looks once more.
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  /** Claims everything due now, sends it, and resolves when every attempt is recorded. */
  async drain(): Promise<void> {
    while ((await this.dispatch()) > 0) await Promise.all(this.chains);
    await Promise.all(this.chains);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      let unavailable = false;
      try {
        claimed = await this.dispatch();
      } catch (error) {
        unavailable = isDatabaseUnavailable(error);
        this.logFailure(error, {}, "claiming deliveries failed");
      }
      if (!this.running) break;
      if (unavailable) await this.sleep(UNAVAILABLE_RETRY_MS);
      else if (claimed === 0 || this.busy.size >= this.options.concurrency) await this.sleep(this.options.pollIntervalMs);
    }
  }

  /**
   * A failure of the database's being away is not logged here: `warden serve` logs the
   * outage once. SQLite busy (another process holding the write lock: an import, a
   * reconcile) is a wait, not an error: whatever failed is done again, a claim at the next
   * look for work, an attempt's record when its lease runs out (then the delivery is
   * sent again: at least once, as always).
   */
  private logFailure(error: unknown, fields: Record<string, string>, message: string): void {
    if (isDatabaseUnavailable(error)) return;
    if (isDatabaseBusy(error)) this.log.debug({ err: error, ...fields }, `${message}: another process holds the database's write lock; tried again`);
    else this.log.error({ err: error, ...fields }, message);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.woken) {
        this.woken = false;
        return resolve();
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        this.woken = false;
        done();
      };
    });
  }

  /** Claims due deliveries for idle endpoints and starts one chain per endpoint. */
  private async dispatch(): Promise<number> {
    const room = this.options.concurrency - this.busy.size;
    if (room <= 0 || this.stopping) return 0;
    this.woken = false;
    const { db, clock } = this.services;
    const now = clock.now();
    for (const [endpointId, until] of this.pausedUntil) if (until <= now) this.pausedUntil.delete(endpointId);
    const endpoints = await findDueEndpoints(db, { now, limit: room, busy: [...this.busy], paused: [...this.pausedUntil.keys()] });
    const due = await this.claim(endpoints, now);
    const byEndpoint = new Map<string, DueDelivery[]>();
    for (const delivery of due) {
      const list = byEndpoint.get(delivery.endpointId) ?? [];
      list.push(delivery);
      byEndpoint.set(delivery.endpointId, list);
    }
    for (const [endpointId, deliveries] of byEndpoint) {
      this.busy.add(endpointId);
      const chain = this.sendInOrder(endpointId, deliveries, now + this.leaseMs).finally(() => {
        this.busy.delete(endpointId);
        this.chains.delete(chain);
        this.wake();
      });
      this.chains.add(chain);
    }
    return due.length;
  }

  private claim(endpoints: readonly DueEndpoint[], now: number, inFlight: readonly string[] = []): Promise<DueDelivery[]> {
    return claimDueDeliveries(this.services.db, {
      workerId: this.workerId,
      now,
      leaseUntil: now + this.leaseMs,
      endpoints,
      perEndpoint: this.options.claimPerEndpoint,
      skipLocked: this.services.dialect === "postgres",
      inFlight,
    });
  }

  /**
   * Sends one endpoint's claimed deliveries in order, then claims its next ones, for as
   * long as it has due deliveries and no other endpoint could be waiting for its place
   * (every place taken): going straight on saves looking for work across endpoints.
   *
   * The claim leased the endpoint until `leasedUntil`; the lease is renewed (one write,
   * which also checks it is still ours) only when an attempt could outlast it, not before
   * every attempt: a batch usually settles long before its lease runs out.
   *
   * A successful attempt is recorded while the next delivery is sent: the records of
   * every endpoint's attempts then meet in the same batches (one commit for many;
   * waiting for each record first made the batches one attempt long). A failed attempt
   * ends the run: once it is recorded (it may have disabled the endpoint), the endpoint
   * is paused (PAUSE_AFTER_FAILURE_MS). The lease is given back only once every record is
   * written: until then another worker would find those deliveries still pending.
   */
  private async sendInOrder(endpointId: string, first: DueDelivery[], firstLeasedUntil: number): Promise<void> {
    const recording = new Map<string, Promise<boolean>>();
    // A record that failed leaves its delivery pending: the endpoint then stays leased
    // until the lease runs out and is sent to again after that, not at once and in a loop.
    let recordFailed = false;
    // Whether the record of the run's last attempt gave the lease back with it.
    let releasedWithRecord = false;
    let deliveries = first;
    let leasedUntil = firstLeasedUntil;
    try {
      while (deliveries.length > 0) {
        // A claim that took less than it could left nothing due at the time: the run ends
        // with its last delivery, whose record gives the lease back in the same
        // transaction (no commit of its own); what is due since is found by the next look
        // for work (the worker is woken by the events this process writes).
        const more = deliveries.length >= this.options.claimPerEndpoint;
        for (const [index, delivery] of deliveries.entries()) {
          if (this.stopping || recordFailed) return;
          const now = this.services.clock.now();
          try {
            // An attempt takes at most the timeout; with a margin for recording it.
            if (now + this.options.timeoutMs + LEASE_MARGIN_MS > leasedUntil) {
              if (!(await renewLease(this.services.db, endpointId, this.workerId, now + this.leaseMs))) return;
              leasedUntil = now + this.leaseMs;
            }
          } catch (error) {
            this.logFailure(error, { endpoint: endpointId }, "an endpoint's lease could not be renewed");
            return;
          }
          const { ok, recorded, releases } = await this.attempt(delivery, !more && index === deliveries.length - 1);
          // The lease runs out and the delivery is claimed again: nothing is lost.
          const settled = recorded.catch((error: unknown) => {
            this.logFailure(error, { delivery: delivery.id }, "delivery attempt could not be recorded");
            recordFailed = true;
            return true;
          });
          if (releases) void settled.then(() => (releasedWithRecord = !recordFailed));
          if (ok) {
            recording.set(delivery.id, settled);
            void settled.then(() => recording.delete(delivery.id));
            continue;
          }
          // Disabled: its deliveries have all failed. Failing: the rest wait for the pause.
          if (await settled) this.pausedUntil.set(endpointId, this.services.clock.now() + PAUSE_AFTER_FAILURE_MS);
          return;
        }
        if (this.stopping || recordFailed || !more || this.busy.size >= this.options.concurrency) return;
        const now = this.services.clock.now();
        try {
          // Attempts not yet recorded are still pending in the table: this claim must not take them again.
          const resendsOnly = (this.pausedUntil.get(endpointId) ?? 0) > now;
          deliveries = await this.claim([{ endpointId, resendsOnly }], now, [...recording.keys()]);
        } catch (error) {
          this.logFailure(error, { endpoint: endpointId }, "claiming an endpoint's next deliveries failed");
          return;
        }
        leasedUntil = now + this.leaseMs;
      }
    } finally {
      await Promise.all(recording.values());
      if (!recordFailed && !releasedWithRecord) {
        await releaseLeases(this.services.db, [endpointId], this.workerId).catch((error: unknown) =>
          this.logFailure(error, { endpoint: endpointId }, "giving back an endpoint's lease failed"),
        );
      }
    }
  }

  /** Signs and sends; whatever goes wrong comes back as a result to record, never a throw. */
  private async send(delivery: DueDelivery, attemptedAt: number): Promise<SendResult> {
    const { clock } = this.services;
    let headers: Record<string, string>;
    try {
      // While a rotation overlaps, with the new secret and the previous one: the time of
      // the attempt decides, so the previous secret signs nothing from its expiry on.
      const secrets = signingSecrets(delivery.secretSealed, delivery.previousSecret, attemptedAt).map((sealed) => this.openSecret(sealed));
      // Every attempt keeps the event id as webhook-id and is signed afresh with the current time.
      headers = webhookHeaders(secrets, delivery.eventId, Math.floor(attemptedAt / 1000), delivery.body);
    } catch (error) {
      // A WARDEN_SECRET_KEY changed since the endpoint was added, say: recorded as the
      // attempt's error (and retried) rather than thrown until the lease runs out, forever.
      this.log.error({ err: error, delivery: delivery.id }, "could not sign a delivery");
      return {
        statusCode: null,
        responseBody: null,
        error: "could not sign: the endpoint's secret cannot be opened with WARDEN_SECRET_KEY",
        durationMs: 0,
        retryAfterMs: null,
      };
    }
    return postWebhook(delivery.url, headers, delivery.body, {
      timeoutMs: this.options.timeoutMs,
      allowPrivate: this.options.allowPrivate,
      now: () => clock.now(),
    });
  }

  private openSecret(sealed: string): string {
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      secret = this.services.secretBox.open(sealed);
      if (this.openedSecrets.size >= OPENED_SECRETS) this.openedSecrets.clear();
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }

  /**
   * Starts or continues the endpoint's failing streak; answers its start. A streak this
   * worker already recorded is not written or read again while it is too young to
   * disable the endpoint: a failing endpoint then costs what a healthy one does. Another
   * process's success meanwhile can only make this worker late to disable, never early.
   */
  private async recordFailure(trx: Executor, endpointId: string, now: number, known: number | undefined): Promise<number> {
    if (known !== undefined && now - known < DISABLE_AFTER_FAILING_MS - FAILING_RECHECK_MS) return known;
    return recordEndpointFailure(trx, endpointId, now);
  }

  /**
   * One attempt: answers once it is sent whether it succeeded, and `recorded`, which
   * settles when it is recorded with whether the endpoint is still enabled. A failure
   * ends the run, and so does a success of its `last` delivery: then the record gives
   * the endpoint's lease back with it (`releases`).
   */
  private async attempt(delivery: DueDelivery, last: boolean): Promise<{ ok: boolean; recorded: Promise<boolean>; releases: boolean }> {
    const { clock } = this.services;
    const attemptedAt = clock.now();
    const result = await this.send(delivery, attemptedAt);
    const finishedAt = clock.now();
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    // The lag runs from the delivery's creation, in its event's transaction.
    this.services.metrics.countAttempt(
      ok ? "succeeded" : result.statusCode === null ? "error" : "failed",
      ok ? (finishedAt - delivery.createdAt) / 1000 : null,
    );
    // What this worker remembers of the endpoint changes only once the record has
    // committed: a batch that rolls back is written again (TransactionBatcher).
    const releases = last || !ok;
    const recorded = this.settles.run({ delivery, result, attemptedAt, finishedAt, ok, releases }).then((settled) => {
      if (settled.failingSince === null) this.failingSince.delete(delivery.endpointId);
      else this.failingSince.set(delivery.endpointId, settled.failingSince);
      if (!ok) this.successWritten.delete(delivery.endpointId);
      else if (settled.successWrittenAt !== null) this.successWritten.set(delivery.endpointId, settled.successWrittenAt);
      return settled.enabled;
    });
    return { ok, recorded, releases };
  }

  /**
   * Records a batch of attempts and releases their deliveries; answers for each whether
   * its endpoint is still enabled, and what was written of the endpoint.
   */
  private async settle(trx: Trx, attempts: readonly Attempted[]): Promise<Settled[]> {
    const settled = await this.recordEndpoints(trx, attempts);
    await recordAttempts(
      trx,
      attempts.map(({ delivery, result, attemptedAt, finishedAt, ok }): AttemptOutcome => {
        const attempt = {
          id: newOrderedId("att", attemptedAt),
          deliveryId: delivery.id,
          attemptedAt,
          durationMs: result.durationMs,
          statusCode: result.statusCode,
          responseBody: result.responseBody,
          error: result.error,
          manual: delivery.oneShot,
        };
        if (ok) return { attempt, workerId: this.workerId, status: "succeeded", nextAttemptAt: null, lastError: null };
        // A failed manual attempt ends its delivery, unless it went ahead of a scheduled
        // retry (a resend of a delivery still being retried): then that retry stands.
        const next = delivery.oneShot ? delivery.retryAt : nextAttemptAfter(delivery.attempts + 1, finishedAt, result.retryAfterMs, this.options.random);
        return {
          attempt,
          workerId: this.workerId,
          status: next === null ? "failed" : "pending",
          nextAttemptAt: next,
          lastError: result.error ?? `HTTP ${result.statusCode}`,
        };
      }),
    );
    // After the attempts: the one that disabled its endpoint fails with the rest.
    for (const [i, { delivery }] of attempts.entries()) {
      const reason = settled[i]?.disabledFor;
      if (reason) await failPendingDeliveries(trx, delivery.endpointId, `endpoint disabled (${reason})`);
    }
    // Runs that end with these attempts give their endpoints back (their earlier attempts
    // were recorded in this batch or the ones before it: batches are written in order).
    await releaseLeases(
      trx,
      attempts.filter((a) => a.releases).map((a) => a.delivery.endpointId),
      this.workerId,
    );
    return settled;
  }

  /**
   * The endpoint rows, before any delivery: disabling and removing an endpoint lock it
   * before its deliveries too, and one lock order means that on PostgreSQL two workers
   * settling attempts to one endpoint while it answers 410 cannot deadlock. Endpoints are
   * written in id order (the attempts of one endpoint in the order they were made), the
   * same in every batch of every process.
   */
  private async recordEndpoints(trx: Trx, attempts: readonly Attempted[]): Promise<Settled[]> {
    const settled: Settled[] = attempts.map(() => ({ enabled: true, disabledFor: null, failingSince: null, successWrittenAt: null }));
    const order = attempts.map((_, i) => i).sort((a, b) => compare(attempts[a]?.delivery.endpointId ?? "", attempts[b]?.delivery.endpointId ?? "") || a - b);
    // What this batch has written of each endpoint so far: its last success, its streak.
    const written = new Map<string, number | undefined>();
    const streak = new Map<string, number | null>();
    for (const i of order) {
      const { delivery, result, finishedAt, ok } = attempts[i] as Attempted;
      const endpointId = delivery.endpointId;
      const out = settled[i] as Settled;
      if (ok) {
        // Under steady success the row is written once a second: a failure recorded by
        // another process meanwhile is cleared within that second, far inside the 5 days
        // that would disable the endpoint. A failure here always writes at once.
        const last = written.has(endpointId) ? written.get(endpointId) : this.successWritten.get(endpointId);
        if (last === undefined || finishedAt - last >= SUCCESS_WRITE_INTERVAL_MS) {
          await recordEndpointSuccess(trx, endpointId, finishedAt);
          written.set(endpointId, finishedAt);
          out.successWrittenAt = finishedAt;
        }
        streak.set(endpointId, null);
        continue;
      }
      const known = streak.has(endpointId) ? streak.get(endpointId) : this.failingSince.get(endpointId);
      const failingSince = await this.recordFailure(trx, endpointId, finishedAt, known ?? undefined);
      streak.set(endpointId, failingSince);
      written.set(endpointId, undefined);
      out.failingSince = failingSince;
      const reason = result.statusCode === 410 ? "gone" : finishedAt - failingSince >= DISABLE_AFTER_FAILING_MS ? "failing" : null;
      if (reason !== null) {
        await setEndpointEnabled(trx, endpointId, false, reason, finishedAt);
        out.enabled = false;
        out.disabledFor = reason;
      }
    }
    return settled;
  }
}

/** An attempt made, waiting to be recorded. */
interface Attempted {
  delivery: DueDelivery;
  result: SendResult;
  attemptedAt: number;
  finishedAt: number;
  ok: boolean;
  /** The run ends with this attempt: its record gives the endpoint's lease back. */
  releases: boolean;
}

/** What recording an attempt left of its endpoint. */
interface Settled {
  enabled: boolean;
  /** Why the endpoint was disabled by this attempt. */
  disabledFor: "gone" | "failing" | null;
  failingSince: number | null;
  successWrittenAt: number | null;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
