import type { FastifyInstance } from "fastify";

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

/**
 * Once closing begins, every answer says `Connection: close`. Node closes only the
 * connections idle at that moment; a keep-alive connection whose request was under way
 * would otherwise stay open after its answer until the client's keep-alive ends (72 s
 * here), holding the shutdown for as long. Added at the root, before any route.
 */
export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
}
