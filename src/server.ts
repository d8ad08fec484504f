import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import { systemClock } from "./clock.js";
import type { Config } from "./config.js";
import { RetentionPruner } from "./retention/retention.service.js";
import { createServices } from "./services.js";
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from "./webhooks/delivery.worker.js";

/** Starts `warden serve`: listens, and on SIGINT/SIGTERM stops taking requests, drains, closes the database. */
export async function startServer(config: Readonly<Config>): Promise<FastifyInstance> {
  const services = await createServices(config, { clock: systemClock });
  const app = await buildApp(services);
  const worker = config.deliveryWorker
    ? new DeliveryWorker(services, app.log, { ...DEFAULT_WORKER_OPTIONS, allowPrivate: config.allowPrivateWebhooks, leaseMs: config.deliveryLeaseMs })
    : null;
  const unsubscribe = worker ? services.signals.onDelivery(() => worker.wake()) : null;
  const pruner = new RetentionPruner(services, app.log);
  // Resources are released in reverse order: stop sending, then close the database.
  app.addHook("onClose", async () => {
    unsubscribe?.();
    await worker?.stop();
    await pruner.stop();
    await services.close();
  });
  const shutdown = (signal: string) => {
    app.log.info({ signal }, "shutting down");
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  await app.listen({ port: config.port, host: config.host });
  worker?.start();
  pruner.start();
  return app;
}
