import type { Db, Trx } from "./database.js";
import { GroupCommit, type Waiting } from "./group-commit.js";
import { isDatabaseUnavailable } from "./storage-faults.js";

/**
 * Writes what is handed to it in one turn of the event loop as one batch, in one
 * transaction: one commit (on PostgreSQL, one WAL flush) for the batch instead of one
 * each, and `write` sees the whole batch, so it can write it in a few set-wide
 * statements rather than a round trip per unit. Each unit is all or nothing as it would
 * be alone: when the batch fails, it is rolled back and every unit is written again in a
 * transaction of its own, so only the failing one fails. A unit may therefore be written
 * twice: `write` must keep its effects in the database, and its caller apply the answer
 * only once it has it. A batch that failed because the database is unreachable fails
 * every unit at once: written one by one, each would wait for the database in turn.
 */
export class TransactionBatcher<I, O> {
  private readonly group: GroupCommit<I, O>;

  /** `write` answers one output per input, in order; `lingerMs` as in GroupCommit. */
  constructor(
    private readonly db: Db,
    private readonly write: (trx: Trx, inputs: readonly I[]) => Promise<O[]>,
    options: { maxBatch?: number; lingerMs?: number } = {},
  ) {
    this.group = new GroupCommit((batch) => this.writeBatch(batch), options.maxBatch ?? 64, 1, options.lingerMs ?? 0);
  }

  run(input: I): Promise<O> {
    return this.group.add(input);
  }

  private async writeBatch(batch: Waiting<I, O>[]): Promise<void> {
    if (batch.length > 1) {
      let outputs: O[] | null = null;
      try {
        outputs = await this.db.transaction().execute((trx) =>
          this.write(
            trx,
            batch.map((unit) => unit.input),
          ),
        );
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          for (const { reject } of batch) reject(error);
          return;
        }
        // Some unit failed: each is written alone below, so that the others do not fail with it.
      }
      if (outputs) {
        for (const [i, { resolve }] of batch.entries()) resolve(outputs[i] as O);
        return;
      }
    }
    for (const { input, resolve, reject } of batch) {
      try {
        const [output] = await this.db.transaction().execute((trx) => this.write(trx, [input]));
        resolve(output as O);
      } catch (error) {
        reject(error);
      }
    }
  }
}
