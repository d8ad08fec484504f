import { dialectOf, type Executor } from "./database.js";
import { GroupCommit } from "./group-commit.js";

// Reads waiting for one statement; past this many the rest make the next batch.
const MAX_BATCH = 64;
// Batches of one read running at once. Reads take no locks, so a batch need not wait for
// the one before it: with one at a time, a statement slowed by a bigger database (1M
// customers) held back every request behind it while neither Warden nor PostgreSQL was busy.
const IN_FLIGHT = 3;

/**
 * A read that concurrent requests share on PostgreSQL: the reads asked for in one turn
 * of the event loop run as one statement (`many`, answering in the order asked), as
 * the counters do (limits/counter.batcher.ts). On PostgreSQL a statement is a round trip
 * whose socket write alone was a third of a retrieve's CPU at 50 connections; a batch of
 * reads pays one. Each read still sees the database as of its own batch's statement,
 * which starts after the read was asked for: nothing is remembered between batches.
 * SQLite runs `one` at once (a statement is a function call there), and so does a read
 * inside a transaction, which must see that transaction's writes.
 */
export function batchedRead<I, O>(one: (ex: Executor, input: I) => Promise<O>, many: (ex: Executor, inputs: readonly I[]) => Promise<O[]>) {
  const groups = new WeakMap<Executor, GroupCommit<I, O>>();
  return (ex: Executor, input: I): Promise<O> => {
    if (ex.isTransaction || dialectOf(ex) === "sqlite") return one(ex, input);
    let group = groups.get(ex);
    if (!group) {
      group = new GroupCommit(
        async (batch) => {
          const [only] = batch;
          if (batch.length === 1 && only) {
            only.resolve(await one(ex, only.input));
            return;
          }
          let outputs: O[] | null = null;
          try {
            outputs = await many(
              ex,
              batch.map((waiting) => waiting.input),
            );
          } catch {
            // One request's input may fail the shared statement (PostgreSQL refused a NUL
            // in one tenant's address, and 256 of another's 400 reads with it): each read
            // runs alone, so only the one at fault fails.
          }
          if (outputs) {
            for (const [i, waiting] of batch.entries()) waiting.resolve(outputs[i] as O);
            return;
          }
          await Promise.all(batch.map((waiting) => one(ex, waiting.input).then(waiting.resolve, waiting.reject)));
        },
        MAX_BATCH,
        IN_FLIGHT,
      );
      groups.set(ex, group);
    }
    return group.add(input);
  };
}
