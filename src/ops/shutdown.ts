import type { FastifyInstance } from "fastify";

/**
 * How long a stopping process waits for the webhook attempts under way (and, twice this,
 * for everything). Below the 15 s attempt timeout on purpose: an orchestrator's usual
 * grace before SIGKILL is 30 s, and an attempt cut short is simply sent again once its
 * endpoint's lease runs out (at least once, as after a crash).
 */
export const SHUTDOWN_GRACE_MS = 10_000;
const IDLE_SWEEP_MS = 50;

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

/**
 * Once closing begins, connections are closed as soon as they fall idle. Node closes
 * only those idle at that moment; a keep-alive connection whose request was under way
 * would otherwise stay open after its answer until the client's keep-alive ends (72 s
 * here), holding the shutdown for as long. Polled rather than hooked into every answer:
 * the hot path pays nothing for it.
 */
export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook("preClose", (done) => {
    timer = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    done();
  });
  app.addHook("onClose", (_instance, done) => {
    clearInterval(timer);
    done();
  });
}
