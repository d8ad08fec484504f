import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import { createMailer } from "./client/mailer.js";
import { systemClock } from "./clock.js";
import type { Config } from "./config.js";
import { foldJob } from "./insights/fold.js";
import { windowsJob } from "./insights/windows.js";
import { MailSender } from "./mail/mail.sender.js";
import { waitForDatabase } from "./ops/database-wait.js";
import { SHUTDOWN_GRACE_MS, settleWithin } from "./ops/shutdown.js";
import { describeStartFailure, startSummary } from "./ops/start-up.js";
import { paddleReconcileScheduler } from "./paddle/paddle-reconcile.scheduler.js";
import { retentionPruner } from "./retention/retention.service.js";
import { createServices } from "./services.js";
import { stripeReconcileScheduler } from "./stripe/stripe-reconcile.scheduler.js";
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from "./webhooks/delivery.worker.js";

/**
 * How long a statement may run in `warden serve` before it counts as the database not
 * answering: a request is answered (503) within about this, rather than hanging on a
 * server that is cut off. Warden's statements take milliseconds; migrations, which may
 * rightly take longer, run before the bound is set.
 */
const STATEMENT_TIMEOUT_MS = 2_000;

/**
 * Starts `warden serve`: listens, sends webhooks and the outbox's mail, and on SIGINT/SIGTERM
 * stops taking requests, finishes those under way and the webhook attempts and mails in flight (for at most SHUTDOWN_GRACE_MS),
 * gives the endpoints' leases back, closes the database and exits 0. A failure to start
 * closes what was opened and throws, for cli.ts to tell in one line. A database that is
 * unreachable at start is tried again for WARDEN_DB_WAIT_SECONDS, each try `report`ed in
 * one line.
 */
export async function startServer(config: Readonly<Config>, report: (line: string) => void): Promise<FastifyInstance> {
  const services = await waitForDatabase(
    () => createServices(config, { clock: systemClock, statementTimeoutMs: STATEMENT_TIMEOUT_MS, checkpointInBackground: true }),
    (error) => describeStartFailure(error, config),
    { waitSeconds: config.dbWaitSeconds, clock: systemClock, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), report },
  );
  let app: FastifyInstance;
  try {
    app = await buildApp(services);
  } catch (error) {
    await services.close();
    throw error;
  }
  services.metrics.collectProcessMetrics();
  // One line when the database goes and one when it is back, however many requests failed between.
  services.availability.onChange((available, error) => {
    if (available) app.log.warn("the database answers again");
    else app.log.warn({ err: error }, "the database is unreachable: requests that need it answer 503 until it is back");
  });
  const worker = config.deliveryWorker
    ? new DeliveryWorker(services, app.log, { ...DEFAULT_WORKER_OPTIONS, allowPrivate: config.allowPrivateWebhooks, leaseMs: config.deliveryLeaseMs })
    : null;
  const unsubscribe = worker ? services.signals.onDelivery(() => worker.wake()) : null;
  const pruner = retentionPruner(services, app.log);
  const windows = windowsJob(services, app.log);
  const fold = foldJob(services, app.log);
  const reconciler = config.stripeReconcileMinutes > 0 ? stripeReconcileScheduler(services, app.log, config.stripeReconcileMinutes * 60_000) : null;
  const paddleReconciler = config.paddleReconcileMinutes > 0 ? paddleReconcileScheduler(services, app.log, config.paddleReconcileMinutes * 60_000) : null;
  // Mail goes out here, never in a request: an answer does not wait on the relay or tell by its time whom it mailed.
  const mailer = createMailer(config, app.log);
  const mailSender = new MailSender(services, mailer, app.log);
  const unsubscribeMail = services.signals.onMail(() => mailSender.wake());
  // The worker stops claiming as soon as closing begins, while the requests under way finish.
  let workerStopped: Promise<void> | undefined;
  let mailStopped: Promise<void> | undefined;
  app.addHook("preClose", async () => {
    unsubscribe?.();
    unsubscribeMail();
    workerStopped = worker?.stop();
    mailStopped = mailSender.stop();
    // Devices waiting for an access change are answered "no change" now, not at the end of their wait.
    await services.accessWatch.stop();
  });
  // Resources are released in reverse order: stop sending and pruning, then close the database.
  app.addHook("onClose", async () => {
    if (workerStopped && !(await settleWithin(workerStopped, SHUTDOWN_GRACE_MS))) {
      app.log.warn("webhook attempts still under way after the grace period: their endpoints' leases will run out instead");
    }
    if (mailStopped && !(await settleWithin(mailStopped, SHUTDOWN_GRACE_MS))) {
      app.log.warn("a mail was still being sent after the grace period: it stays in the outbox and goes out at the next start");
    }
    mailer.close();
    await pruner.stop();
    await windows.stop();
    await fold.stop();
    if (reconciler && !(await settleWithin(reconciler.stop(), SHUTDOWN_GRACE_MS))) {
      app.log.warn("a reconcile with Stripe was still running after the grace period: its lease runs out, and the next round reads again");
    }
    if (paddleReconciler && !(await settleWithin(paddleReconciler.stop(), SHUTDOWN_GRACE_MS))) {
      app.log.warn("a reconcile with Paddle was still running after the grace period: the next round reads again");
    }
    await services.close();
  });
  const shutdown = (signal: string) => {
    app.log.info({ signal }, "shutting down: finishing the requests and webhook attempts under way");
    // Requests that never finish (a client that stops sending its body) must not hold the process.
    setTimeout(() => {
      app.log.error("shutdown did not finish in time; exiting with work under way");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS * 2).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    throw error;
  }
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  worker?.start();
  mailSender.start();
  pruner.start();
  windows.start();
  fold.start();
  reconciler?.start();
  paddleReconciler?.start();
  services.accessWatch.start();
  const summary = startSummary(config, (app.server.address() as AddressInfo).port);
  app.log.info(summary.info);
  for (const warning of summary.warnings) app.log.warn(warning);
  return app;
}
