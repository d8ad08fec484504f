import type { Db, Trx } from "./database.js";
import { GroupCommit, type Waiting } from "./group-commit.js";

type Work = (trx: Trx) => Promise<unknown>;

/**
 * Runs the units of work handed to it in one turn of the event loop in one transaction:
 * one commit (on PostgreSQL, one WAL flush) for the batch instead of one each. Each unit
 * is all or nothing as it would be alone: when any unit of a batch fails, the batch is
 * rolled back and every unit runs again in a transaction of its own, so only the failing
 * one fails. A unit may therefore run twice: it must keep its effects in the database
 * (or apply them after it resolves).
 */
export class TransactionBatcher {
  private readonly group: GroupCommit<Work, unknown>;

  constructor(
    private readonly db: Db,
    maxBatch = 64,
  ) {
    this.group = new GroupCommit((batch) => this.write(batch), maxBatch);
  }

  run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.group.add(work) as Promise<T>;
  }

  private async write(batch: Waiting<Work, unknown>[]): Promise<void> {
    if (batch.length > 1) {
      let outputs: unknown[] | null = null;
      try {
        outputs = await this.db.transaction().execute(async (trx) => {
          const results: unknown[] = [];
          for (const { input } of batch) results.push(await input(trx));
          return results;
        });
      } catch {
        // Some unit failed: each runs alone below, so that the others do not fail with it.
      }
      if (outputs) {
        for (const [i, { resolve }] of batch.entries()) resolve(outputs[i]);
        return;
      }
    }
    for (const { input, resolve, reject } of batch) {
      try {
        resolve(await this.db.transaction().execute(input));
      } catch (error) {
        reject(error);
      }
    }
  }
}
