// `warden events|endpoints|deliveries …`: webhook commands for vendors. They act through a
// running service with an API key, except the ones that only need this machine.
import { systemClock } from "../clock.js";

import type { Delivery, WebhookEndpoint, WebhookEvent } from "../webhooks/webhook.schema.js";
import { ApiClient, clientOptions } from "./api-client.js";
import { CliError, type Command, optStr, str } from "./command.js";
import { devSecretPath, loadDevSecret } from "./dev-secret.js";

const SEND_TIMEOUT_MS = 15_000;
const RECOVER_WINDOWS = ["hour", "day", "week", "month"];

function describeEndpoint(e: WebhookEndpoint): string {
  const state = e.enabled ? "enabled" : `disabled (${e.disabled_reason ?? "manual"})`;
  return `${e.id}  ${e.url}  ${state}  events: ${e.events === null ? "all" : e.events.join(",")}`;
}

function describeDelivery(d: Delivery): string {
  const last = d.attempts[d.attempts.length - 1];
  const outcome = last ? (last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? "")) : "not attempted yet";
  return `${d.id}  ${d.status.padEnd(9)}  event ${d.event}  endpoint ${d.endpoint}  attempts ${d.attempts.length}  last: ${outcome}`;
}

export const webhookCommands: Record<string, Command> = {
  "events list": {
    summary: "List the event types Warden sends, with what each means.",
    usage: "warden events list",
    options: {},
    async run() {
      const { describeEventTypes } = await import("../events/event-types.js");
      const types = describeEventTypes();
      return { json: { data: types }, text: types.map((t) => `${t.type.padEnd(22)} ${t.description}`).join("\n") };
    },
  },
  "events secret": {
    summary: "Print this machine's development signing secret (for events send --url).",
    usage: "warden events secret",
    options: {},
    async run({ env }) {
      const secret = await loadDevSecret(env);
      return { json: { secret, path: devSecretPath(env) }, text: secret };
    },
  },
  "events send": {
    summary: "Send an example event: to every endpoint through the service, or signed from here to --url.",
    usage: "warden events send TYPE [--url http://localhost:3000/hook] [--secret whsec_…]",
    options: { url: { type: "string" }, secret: { type: "string" }, ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [type = ""], env }) {
      const { isEventType, serializeEvent } = await import("../events/event-types.js");
      const { webhookHeaders } = await import("../webhooks/signature.js");
      const { postWebhook } = await import("../webhooks/sender.js");
      if (!isEventType(type)) {
        throw new CliError("invalid_request_error", `Unknown event type "${type}". See warden events list.`, "TYPE");
      }
      const client = ApiClient.from(values, env);
      const url = optStr(values, "url");
      if (url === undefined) {
        const sent = await client.request<{ event: WebhookEvent; deliveries: number }>("POST", "/webhooks/examples", { type });
        return {
          json: sent,
          text: `Sent example ${type} ${sent.event.id} to ${sent.deliveries} endpoint${sent.deliveries === 1 ? "" : "s"}; see warden deliveries list.`,
        };
      }
      if (!/^https?:\/\//.test(url)) throw new CliError("invalid_request_error", "--url must be an http:// or https:// URL.", "url");
      const secret = optStr(values, "secret") ?? (await loadDevSecret(env));
      // The service counts the example (100 a day per workspace, both ways together) and
      // answers it; this machine signs it and sends it.
      const { event } = await client.request<{ event: WebhookEvent }>("POST", "/webhooks/examples", { type, deliver: false });
      const body = serializeEvent({ ...event, type });
      let headers: Record<string, string>;
      try {
        headers = { ...webhookHeaders(secret, event.id, Math.floor(systemClock.now() / 1000), body) };
      } catch (error) {
        throw new CliError("invalid_request_error", `--secret is not a whsec_ signing secret: ${(error as Error).message}`, "secret");
      }
      const result = await postWebhook(url, headers, body, { timeoutMs: SEND_TIMEOUT_MS, allowPrivate: true, now: () => systemClock.now() });
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      const outcome = result.statusCode !== null ? `HTTP ${result.statusCode}` : `failed: ${result.error}`;
      return {
        json: {
          event: event.id,
          type,
          url,
          status: result.statusCode,
          error: result.error,
          duration_ms: result.durationMs,
          response_body: result.responseBody,
        },
        text: `Sent ${type} ${event.id} to ${url}: ${outcome} in ${result.durationMs} ms`,
        exitCode: ok ? 0 : 1,
      };
    },
  },
  "endpoints add": {
    summary: "Add a webhook endpoint and print its signing secret.",
    usage: "warden endpoints add URL [--events purchase.completed,payment.refunded]",
    options: { events: { type: "string" }, ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [url], env }) {
      const events = optStr(values, "events")
        ?.split(",")
        .map((e) => e.trim())
        .filter((e) => e !== "");
      const created = await ApiClient.from(values, env).request<{ endpoint: WebhookEndpoint; secret: string }>("POST", "/webhooks/endpoints", {
        url,
        ...(events ? { events } : {}),
      });
      return {
        json: { id: created.endpoint.id, url: created.endpoint.url, events: created.endpoint.events, secret: created.secret },
        text: `Added ${created.endpoint.id} for ${created.endpoint.url}\nSigning secret: ${created.secret}\nKeep it now; warden shows it again only on the endpoint's page.`,
      };
    },
  },
  "endpoints list": {
    summary: "List webhook endpoints with their state.",
    usage: "warden endpoints list",
    options: { ...clientOptions },
    async run({ values, env }) {
      const list = await ApiClient.from(values, env).request<{ data: WebhookEndpoint[] }>("GET", "/webhooks/endpoints");
      return { json: list, text: list.data.length === 0 ? "No endpoints." : list.data.map(describeEndpoint).join("\n") };
    },
  },
  "endpoints remove": {
    summary: "Remove a webhook endpoint; its pending deliveries fail.",
    usage: "warden endpoints remove ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const removed = await ApiClient.from(values, env).request<WebhookEndpoint>("DELETE", `/webhooks/endpoints/${encodeURIComponent(id)}`);
      return { json: removed, text: `Removed ${removed.id}.` };
    },
  },
  "endpoints secret": {
    summary: "Print an endpoint's signing secret.",
    usage: "warden endpoints secret ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const { secret } = await ApiClient.from(values, env).request<{ secret: string }>("GET", `/webhooks/endpoints/${encodeURIComponent(id)}/secret`);
      return { json: { id, secret }, text: secret };
    },
  },
  "endpoints rotate-secret": {
    summary: "Give an endpoint a new signing secret and print it; the old one also signs for 24 hours.",
    usage: "warden endpoints rotate-secret ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const rotated = await ApiClient.from(values, env).request<{ secret: string; previous_secret_expires_at: string }>(
        "POST",
        `/webhooks/endpoints/${encodeURIComponent(id)}/secret/rotate`,
      );
      return {
        json: { id, ...rotated },
        text:
          `New signing secret of ${id}: ${rotated.secret}\n` +
          `Until ${rotated.previous_secret_expires_at} every delivery is signed with it and with the old one; then with it alone. Put it in your receiver before then.`,
      };
    },
  },
  "endpoints enable": {
    summary: "Enable an endpoint again, and say how many of its failed deliveries `deliveries recover` could resend.",
    usage: "warden endpoints enable ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const client = ApiClient.from(values, env);
      const path = `/webhooks/endpoints/${encodeURIComponent(id)}`;
      const endpoint = await client.request<WebhookEndpoint>("POST", `${path}/enable`);
      const recoverable = await client.request<Record<"hour" | "day" | "week" | "month", number>>("GET", `${path}/recoverable`);
      const failed = (n: number) => `${n} failed deliver${n === 1 ? "y" : "ies"}`;
      const text =
        recoverable.month === 0
          ? `Enabled ${endpoint.id}. No failed deliveries from the last 30 days to recover.`
          : `Enabled ${endpoint.id}. ${failed(recoverable.month)} from the last 30 days (${recoverable.day} from the last day) can be attempted again:\n` +
            `  warden deliveries recover --endpoint ${endpoint.id} --since day|week|month`;
      return { json: { endpoint, recoverable }, text };
    },
  },
  "endpoints disable": {
    summary: "Disable an endpoint: nothing is sent to it, and its pending deliveries fail.",
    usage: "warden endpoints disable ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const endpoint = await ApiClient.from(values, env).request<WebhookEndpoint>("POST", `/webhooks/endpoints/${encodeURIComponent(id)}/disable`);
      return { json: endpoint, text: `Disabled ${endpoint.id}; warden endpoints enable ${endpoint.id} turns it back on.` };
    },
  },
  "deliveries list": {
    summary: "List deliveries, newest first, with their last attempt.",
    usage: "warden deliveries list [--endpoint ID] [--status pending|succeeded|failed] [--limit N]",
    options: { endpoint: { type: "string" }, status: { type: "string" }, limit: { type: "string" }, ...clientOptions },
    async run({ values, env }) {
      const query = new URLSearchParams();
      for (const name of ["endpoint", "status", "limit"]) {
        const value = optStr(values, name);
        if (value !== undefined) query.set(name, value);
      }
      const page = await ApiClient.from(values, env).request<{ data: Delivery[]; has_more: boolean }>("GET", `/webhooks/deliveries?${query}`);
      return { json: page, text: page.data.length === 0 ? "No deliveries." : page.data.map(describeDelivery).join("\n") };
    },
  },
  "deliveries resend": {
    summary: "Attempt a delivery once more now, with the same webhook-id (also one still being retried).",
    usage: "warden deliveries resend ID",
    options: { ...clientOptions },
    positionals: 1,
    async run({ values, positionals: [id = ""], env }) {
      const client = ApiClient.from(values, env);
      const path = `/webhooks/deliveries/${encodeURIComponent(id)}`;
      const before = await client.request<Delivery>("GET", path);
      const delivery = await client.request<Delivery>("POST", `${path}/resend`);
      const scheduled = before.status === "pending" ? " It is still being retried: should this attempt fail, its next scheduled retry stands." : "";
      return { json: delivery, text: `Queued one new attempt of ${delivery.id} (same webhook-id).${scheduled}` };
    },
  },
  "deliveries recover": {
    summary: "Attempt once more every failed delivery of an endpoint since an hour, a day, a week or a month ago.",
    usage: "warden deliveries recover --endpoint ID --since hour|day|week|month",
    options: { endpoint: { type: "string" }, since: { type: "string" }, ...clientOptions },
    required: ["endpoint", "since"],
    async run({ values, env }) {
      const since = str(values, "since");
      if (!RECOVER_WINDOWS.includes(since)) throw new CliError("invalid_request_error", "--since must be hour, day, week or month.", "since");
      const endpoint = str(values, "endpoint");
      const result = await ApiClient.from(values, env).request<{ queued: number }>("POST", `/webhooks/endpoints/${encodeURIComponent(endpoint)}/recover`, {
        since,
      });
      return { json: result, text: `Queued ${result.queued} failed deliver${result.queued === 1 ? "y" : "ies"} of ${endpoint} for one new attempt.` };
    },
  },
};
