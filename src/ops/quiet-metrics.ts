import type { MetricsRecorder } from "./metrics.js";

/**
 * The figures of a command's services (`warden admin …`): dropped. Nothing scrapes a
 * command's process, and keeping them would load prom-client and the OpenTelemetry API
 * (~90 modules, a third of an admin command's start, issue 49).
 */
export class QuietMetrics implements MetricsRecorder {
  readonly contentType = "text/plain; version=0.0.4; charset=utf-8";
  collectProcessMetrics(): void {}
  readFrom(): void {}
  readHeldCounts(): void {}
  readQuotaLeases(): void {}
  readAccessWaiters(): void {}
  readAnswerCache(): void {}
  countAccessWait(): void {}
  countRequest(): void {}
  countRefusal(): void {}
  countAttempt(): void {}
  countStripeEvent(): void {}
  countReconcileFindings(): void {}
  countStatementError(): void {}
  countUnavailable(): void {}
  render(): Promise<string> {
    return Promise.resolve("");
  }
}
