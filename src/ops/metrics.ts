import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CacheFigures } from "../customers/answer-cache.js";
import type { PoolStats } from "../db/database.js";
import type { LeaseFigures } from "../limits/quota-leases.js";
import type { DeliveryFigures } from "./ops.store.js";

/** Figures read from the database when scraped, not kept up to date on every change. */

interface RequestSeries {
  /** The series' labels as written: `method="GET",route="/…",status="200"`. */
  labels: string;
  count: number;
  sum: number;
  /** Answers per bucket, not cumulative: `buckets[i]` took more than the bucket before and at most `REQUEST_BUCKETS[i]`. */
  buckets: Float64Array;
}

// A label value in the text format: backslash, double quote and line feed escaped.
const escapeLabel = (value: string) => value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");

export type AttemptResult = "succeeded" | "failed" | "error";

/**
 * What the services, the routes and the use cases ask of the figures: `Metrics` for
 * `warden serve` and the tests, `QuietMetrics` (quiet-metrics.ts) for a command, whose
 * process ends before anything could scrape them.
 */
export type MetricsRecorder = Omit<Metrics, "registry">;

// Latency buckets in seconds: a retrieve takes a fraction of a millisecond in process,
// a grant a few milliseconds, a slow list page or a stalled database the upper ones.
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
// Delivery lag, event written to 2xx received: under a second when the receiver is up,
// then the retry schedule's steps (5 s, 5 min, 30 min, 2 h…) when it was not.
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 28_800, 86_400];

/**
 * Every figure Warden exports, on a registry of its own (one per Services, so tests each
 * get theirs, and prom-client's global registry holds nothing of ours). Label values come
 * from closed sets only: route patterns, status codes, limit names, Stripe's event
 * types, never a raw URL, a workspace or an address.
 */
export class Metrics implements MetricsRecorder {
  readonly registry = new Registry();
  /** Answers by method, route pattern and status: plain numbers, written out at a scrape (`renderRequests`). */
  private readonly requestSeries = new Map<string, RequestSeries>();
  private readonly refusals: Counter<"limit">;
  private readonly attempts: Counter<"result">;
  private readonly deliveryLag: Histogram<string>;
  private readonly stripeEvents: Counter<"type" | "result">;

  private readonly stripeReconciled: Counter<"kind">;
  private readonly statementErrors: Counter<string>;
  private readonly unavailable: Counter<string>;
  private readonly accessWaits: Counter<"result">;
  /** Set by whoever knows the figures (services.ts); read at each scrape. */
  private deliverySource: (() => Promise<DeliveryFigures>) | null = null;

  constructor() {
    const registers = [this.registry];
    this.refusals = new Counter({
      name: "warden_limit_refusals_total",
      help: "Requests refused by a rate limit (429) or a plan limit (403), by limit",
      labelNames: ["limit"],
      registers,
    });
    this.attempts = new Counter({
      name: "warden_webhook_attempts_total",
      help: "Webhook delivery attempts: succeeded (2xx), failed (another status) or error (no answer: timeout, refused, unsigned)",
      labelNames: ["result"],
      registers,
    });
    this.deliveryLag = new Histogram({
      name: "warden_webhook_delivery_lag_seconds",
      help: "Time from a delivery's creation (its event's) to the 2xx that settled it",
      buckets: LAG_BUCKETS,
      registers,
    });
    this.stripeEvents = new Counter({
      name: "warden_stripe_events_total",
      help: "Verified Stripe events taken in, by type and result (applied, ignored, deferred, duplicate)",
      labelNames: ["type", "result"],
      registers,
    });
    this.stripeReconciled = new Counter({
      name: "warden_stripe_reconcile_found_total",
      help: "What reconciles with Stripe found: facts webhooks had missed, now applied, and purchases that map to no plan",
      labelNames: ["kind"],
      registers,
    });
    this.statementErrors = new Counter({
      name: "warden_db_statement_errors_total",
      help: "Database statements that failed (through the query builder)",
      registers,
    });
    this.accessWaits = new Counter({
      name: "warden_access_waits_total",
      help: "Waits on GET /tools/{tool}/access/changes answered, by result: changed (a new answer) or unchanged (204)",
      labelNames: ["result"],
      registers,
    });
    this.unavailable = new Counter({
      name: "warden_db_unavailable_total",
      help: "Statements and connections that failed because PostgreSQL was unreachable (down, restarting, not answering)",
      registers,
    });
    const metrics = this;
    const gauge = (name: string, help: string, read: (figures: DeliveryFigures) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          if (!metrics.deliverySource) return;
          // A database that does not answer must not cost the process's own figures: NaN says "unknown".
          const figures = await metrics.deliverySource().catch(() => null);
          this.set(figures ? read(figures) : Number.NaN);
        },
      });
    gauge("warden_webhook_deliveries_pending", "Deliveries waiting to be sent (first try or retry)", (f) => f.pendingDeliveries);
    gauge("warden_webhook_deliveries_retrying", "Pending deliveries that have failed at least once", (f) => f.retryingDeliveries);
    gauge("warden_webhook_endpoints_failing", "Enabled endpoints whose last attempt failed", (f) => f.failingEndpoints);
    gauge("warden_webhook_endpoints_disabled", "Endpoints disabled (410 Gone, 5 days failing, or by hand)", (f) => f.disabledEndpoints);
  }

  /**
   * Adds prom-client's process figures (CPU, memory, event-loop lag, GC). Only `warden
   * serve` does: they start observers that live as long as the process, which a command
   * or a test's services should not leave behind.
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Where the delivery gauges read their figures at a scrape, and the pool's, if there is
   * one: SQLite has no pool, so it exports no pool gauges rather than zeros.
   */
  readFrom(sources: { deliveries: () => Promise<DeliveryFigures>; pool: (() => PoolStats) | null }): void {
    this.deliverySource = sources.deliveries;
    const readPool = sources.pool;
    if (!readPool) return;
    const pool = (name: string, help: string, read: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read(readPool()));
        },
      });
    pool("warden_db_pool_connections", "PostgreSQL connections open in the pool", (s) => s.total);
    pool("warden_db_pool_idle", "PostgreSQL connections open and idle", (s) => s.idle);
    pool("warden_db_pool_waiting", "Queries waiting for a PostgreSQL connection", (s) => s.waiting);
  }

  /** The gauge of limit counts held in memory while the database's storage is full (limits/held-counts.ts). */
  readHeldCounts(read: () => number): void {
    new Gauge({
      name: "warden_limit_counts_held",
      help: "Limit counters held in memory because the database's storage was full; written once it has room",
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Quota leased in blocks (limits/quota-leases.ts): how much this process holds unspent, and what it took. */
  readQuotaLeases(read: () => LeaseFigures): void {
    new Gauge({
      name: "warden_quota_leased_counters",
      help: "Limit counters this process counts from leased blocks",
      registers: [this.registry],
      collect() {
        this.set(read().counters);
      },
    });
    new Gauge({
      name: "warden_quota_leased_units_unspent",
      help: "Units of quota this process holds leased and unspent (given back after a second idle)",
      registers: [this.registry],
      collect() {
        this.set(read().unspent);
      },
    });
    this.readTotal("warden_quota_lease_blocks_total", "Blocks of quota taken from the database", () => read().blocksTaken);
    this.readTotal("warden_quota_lease_units_total", "Units of quota the blocks taken brought", () => read().unitsTaken);
  }

  /** A counter over a total kept elsewhere in the process: each scrape sets it to that total. */
  private readTotal(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** The gauge of devices waiting for an access change (client/access-watch.ts), and how their waits ended. */
  readAccessWaiters(read: () => number): void {
    new Gauge({
      name: "warden_access_waiters",
      help: "Devices waiting on GET /tools/{tool}/access/changes in this process",
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The answer cache's figures (customers/answer-cache.ts), read at each scrape. */
  readAnswerCache(read: () => CacheFigures): void {
    const total = (name: string, help: string, pick: (f: CacheFigures) => number) => this.readTotal(name, help, () => pick(read()));
    total("warden_answer_cache_hits_total", "Retrieve and access-check reads answered from the answer cache", (f) => f.hits);
    total("warden_answer_cache_misses_total", "Retrieve and access-check reads the answer cache could not answer", (f) => f.misses);
    total("warden_answer_cache_evictions_total", "Answers dropped from the answer cache to stay within WARDEN_CACHE_MB", (f) => f.evictions);
    total("warden_answer_cache_refused_total", "Answers the full answer cache did not keep because their question had not missed recently", (f) => f.refused);
    new Gauge({
      name: "warden_answer_cache_bytes",
      help: "Estimated bytes held by the answer cache",
      registers: [this.registry],
      collect() {
        this.set(read().bytes);
      },
    });
  }

  countAccessWait(result: "changed" | "unchanged"): void {
    this.accessWaits.inc({ result });
  }

  /** Every answer, on the hot path: a Map lookup and three additions, no label object nor prom-client's hashing of it. */
  countRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.requestSeries.get(key);
    if (series === undefined) {
      series = {
        labels: `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status="${status}"`,
        count: 0,
        sum: 0,
        buckets: new Float64Array(REQUEST_BUCKETS.length),
      };
      this.requestSeries.set(key, series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < REQUEST_BUCKETS.length && seconds > (REQUEST_BUCKETS[bucket] as number)) bucket++;
    if (bucket < REQUEST_BUCKETS.length) series.buckets[bucket] = (series.buckets[bucket] ?? 0) + 1;
  }

  /** The request counter and histogram in Prometheus' text format, as prom-client writes its own (buckets cumulative, `le` first). */
  private renderRequests(): string {
    const lines = [
      "# HELP warden_http_requests_total HTTP requests answered, by method, route pattern and status",
      "# TYPE warden_http_requests_total counter",
    ];
    for (const series of this.requestSeries.values()) lines.push(`warden_http_requests_total{${series.labels}} ${series.count}`);
    lines.push(
      "# HELP warden_http_request_duration_seconds Time from receiving a request to sending its answer, by method, route pattern and status",
      "# TYPE warden_http_request_duration_seconds histogram",
    );
    for (const series of this.requestSeries.values()) {
      let cumulative = 0;
      REQUEST_BUCKETS.forEach((le, i) => {
        cumulative += series.buckets[i] ?? 0;
        lines.push(`warden_http_request_duration_seconds_bucket{le="${le}",${series.labels}} ${cumulative}`);
      });
      lines.push(`warden_http_request_duration_seconds_bucket{le="+Inf",${series.labels}} ${series.count}`);
      lines.push(`warden_http_request_duration_seconds_sum{${series.labels}} ${series.sum}`);
      lines.push(`warden_http_request_duration_seconds_count{${series.labels}} ${series.count}`);
    }
    return `${lines.join("\n")}\n`;
  }

  countRefusal(limit: string): void {
    this.refusals.inc({ limit });
  }

  countAttempt(result: AttemptResult, lagSeconds: number | null): void {
    this.attempts.inc({ result });
    if (lagSeconds !== null) this.deliveryLag.observe(lagSeconds);
  }

  countStripeEvent(type: string, result: string): void {
    this.stripeEvents.inc({ type, result });
  }

  /** A reconcile's findings (dry runs change nothing and are not counted). */
  countReconcileFindings(applied: number, unmapped: number): void {
    this.stripeReconciled.inc({ kind: "applied" }, applied);
    this.stripeReconciled.inc({ kind: "unmapped" }, unmapped);
  }

  countStatementError(): void {
    this.statementErrors.inc();
  }

  countUnavailable(): void {
    this.unavailable.inc();
  }

  /** The Prometheus text exposition of every figure. */
  async render(): Promise<string> {
    // prom-client parts its figures with an empty line; these follow the same way.
    return `${(await this.registry.metrics()).trimEnd()}\n\n${this.renderRequests()}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
