// Spends of one meter, one at a time within a process, before they take a database
// connection. The database alone makes spends exact (each locks its meter's row); this
// only keeps a burst on one person from filling the PostgreSQL pool with transactions
// that all wait on that one row lock, while every other request waits for a connection.
// With it, each process holds at most one connection per meter waiting on the lock.

const tails = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier call with the same key has settled. */
export async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, settled);
  try {
    return await run;
  } finally {
    // The last in line leaves no entry behind.
    if (tails.get(key) === settled) tails.delete(key);
  }
}
