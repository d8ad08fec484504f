/**
 * How long a stopping process waits for the webhook attempts under way (and, twice this,
 * for everything). Below the 15 s attempt timeout on purpose: an orchestrator's usual
 * grace before SIGKILL is 30 s, and an attempt cut short is simply sent again once its
 * endpoint's lease runs out (at least once, as after a crash).
 */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Waits for `work` for at most `ms`; answers whether it settled in time. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
