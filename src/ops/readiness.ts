import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../clock.js";
import { type Db, readMigrationState } from "../db/database.js";
import { isDatabaseUnavailable } from "../db/storage-faults.js";

export type Readiness = { ready: true } | { ready: false; reason: string };

/** How long one answer serves later calls: an orchestrator polling every second costs one small query a second. */
const FRESH_MS = 1_000;
/** A database that takes this long to answer a one-table read is not ready, whatever it answers later. */
const ANSWER_WITHIN_MS = 2_000;

/**
 * Whether this process can serve: the database answers, and its schema is the one this
 * code knows (every migration applied, none unknown). One read of the migrations table
 * proves both. A check still running is shared rather than started again, so a database
 * that hangs is not sent a new query by every caller.
 */
export class ReadinessCheck {
  private last: { at: number; answer: Promise<Readiness> } | null = null;
  private wasReady = true;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  check(): Promise<Readiness> {
    const now = this.clock.now();
    if (this.last && now - this.last.at < FRESH_MS) return this.last.answer;
    const answer = this.probe();
    this.last = { at: now, answer };
    return answer;
  }

  private async probe(): Promise<Readiness> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Readiness>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, reason: `the database did not answer within ${ANSWER_WITHIN_MS / 1000} s` }), ANSWER_WITHIN_MS);
    });
    const read = readMigrationState(this.db).then(
      ({ pending, unknown }): Readiness => {
        if (unknown.length > 0) return { ready: false, reason: `the database has migrations this version does not know (${unknown.join(", ")})` };
        if (pending.length > 0) return { ready: false, reason: `migrations not applied yet (${pending.join(", ")})` };
        return { ready: true };
      },
      (error: unknown): Readiness | null => {
        // Unreachable: `warden serve` logs that once when it begins and once when it ends.
        if (isDatabaseUnavailable(error)) return null;
        this.log.warn({ err: error }, "readiness: the database did not answer");
        return { ready: false, reason: "the database does not answer" };
      },
    );
    const answer = await Promise.race([read, late]).finally(() => clearTimeout(timer));
    if (answer === null) return { ready: false, reason: "the database is unreachable" };
    // Logged when readiness changes, not at every poll.
    if (answer.ready !== this.wasReady) {
      if (answer.ready) this.log.info("ready again");
      else this.log.warn({ reason: answer.reason }, "not ready");
      this.wasReady = answer.ready;
    }
    return answer;
  }
}
