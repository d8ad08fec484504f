import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { runWarden } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { startWarden } from "../test-support/serve.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
});

/** A receiver as a vendor would write it, answering `status` to every POST (changeable through `answer`). */
async function receiver(status = 200): Promise<{ url: string; received: Received[]; answer: { status: number } }> {
  const received: Received[] = [];
  const answer = { status };
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += String(chunk);
    });
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.writeHead(answer.status).end("ok");
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  return { url: `http://127.0.0.1:${address.port}/hook`, received, answer };
}

function verify(secret: string, message: Received): Record<string, unknown> {
  return new Webhook(secret).verify(message.body, {
    "webhook-id": String(message.headers["webhook-id"]),
    "webhook-timestamp": String(message.headers["webhook-timestamp"]),
    "webhook-signature": String(message.headers["webhook-signature"]),
  }) as Record<string, unknown>;
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), what);
}

/** A running service with a workspace, and the environment a vendor's shell would have. */
async function setUp(dialect: (typeof DIALECTS)[number], extra: Record<string, string> = {}) {
  const db = await privateDatabaseEnv(dialect);
  const configHome = await mkdtemp(join(tmpdir(), "warden-config-"));
  after(() => rm(configHome, { recursive: true, force: true }));
  const serverEnv = { ...db, WARDEN_SECRET_KEY: "cli-test-secret-key-0123456789abcdef", WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1", ...extra };
  const email = `${unique("o")}@example.com`;
  const slug = unique("ws");
  assert.equal((await runWarden(serverEnv, "admin", "owner", "create", "--email", email)).code, 0);
  assert.equal((await runWarden(serverEnv, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email)).code, 0);
  const key = (await runWarden(serverEnv, "admin", "key", "create", "--workspace", slug, "--env", "test", "--json")).json().key as string;
  const warden = await startWarden(serverEnv);
  return { env: { XDG_CONFIG_HOME: configHome, WARDEN_API_KEY: key, WARDEN_BASE_URL: warden.baseUrl } };
}

test("events list and events secret work offline; the secret is made once per machine", async () => {
  const configHome = await mkdtemp(join(tmpdir(), "warden-config-"));
  after(() => rm(configHome, { recursive: true, force: true }));
  const env = { XDG_CONFIG_HOME: configHome };
  const list = await runWarden(env, "events", "list", "--json");
  assert.deepEqual(
    list.json().data.map((t: { type: string }) => t.type),
    [
      "purchase.completed",
      "subscription.started",
      "subscription.cancelled",
      "payment.refunded",
      "payment.disputed",
      "dispute.closed",
      "usage.allowance_ran_out",
    ],
  );
  const first = await runWarden(env, "events", "secret");
  assert.match(first.stdout.trim(), /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.equal((await runWarden(env, "events", "secret")).stdout, first.stdout);
  assert.equal((await readFile(join(configHome, "warden", "dev-webhook-secret"), "utf8")).trim(), first.stdout.trim());
});

test("events secret with a config folder it cannot write stops in one line naming the path and the remedy", async () => {
  const dir = await mkdtemp(join(tmpdir(), "warden-config-"));
  after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "a-file");
  await writeFile(file, "");
  const run = await runWarden({ XDG_CONFIG_HOME: file }, "events", "secret");
  assert.equal(run.code, 1);
  assert.equal(run.stdout, "");
  assert.match(
    run.stderr,
    new RegExp(
      `^warden: cannot keep the development signing secret in ${join(file, "warden", "dev-webhook-secret")}: ENOTDIR: .*; set XDG_CONFIG_HOME \\(or HOME\\) to a folder you can write to\n$`,
    ),
  );
});

for (const dialect of DIALECTS) {
  describe(`warden events, endpoints and deliveries (${dialect})`, () => {
    test("events send --url signs locally with the development secret or --secret; the receiver's status decides the exit", async () => {
      const { env } = await setUp(dialect);
      const hook = await receiver();
      const sent = await runWarden(env, "events", "send", "purchase.completed", "--url", hook.url);
      assert.equal(sent.code, 0, sent.stderr);
      assert.match(sent.stdout, /HTTP 200/);
      const devSecret = (await runWarden(env, "events", "secret")).stdout.trim();
      const payload = verify(devSecret, hook.received[0] as Received);
      assert.equal(payload.type, "purchase.completed");
      assert.equal(payload.livemode, false);

      const own = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
      assert.equal((await runWarden(env, "events", "send", "dispute.closed", "--url", hook.url, "--secret", own)).code, 0);
      assert.equal(verify(own, hook.received[1] as Received).type, "dispute.closed");
      assert.throws(() => verify(devSecret, hook.received[1] as Received));

      const failing = await receiver(500);
      const refused = await runWarden(env, "events", "send", "payment.refunded", "--url", failing.url, "--json");
      assert.equal(refused.code, 1);
      assert.equal(refused.json().status, 500);

      const unknown = await runWarden(env, "events", "send", "payment.lost", "--url", hook.url);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /Unknown event type/);
      const noKey = await runWarden({ XDG_CONFIG_HOME: env.XDG_CONFIG_HOME }, "events", "send", "payment.refunded", "--url", hook.url);
      assert.equal(noKey.code, 1);
      assert.match(noKey.stderr, /API key/);
    });

    test("endpoints add/list/remove, events sent through the service, and deliveries list", async () => {
      const { env } = await setUp(dialect);
      const hook = await receiver();
      const added = await runWarden(env, "endpoints", "add", hook.url, "--events", "payment.refunded,dispute.closed", "--json");
      assert.equal(added.code, 0, added.stderr);
      const endpoint = added.json();
      assert.match(endpoint.secret, /^whsec_/);
      assert.deepEqual(endpoint.events, ["payment.refunded", "dispute.closed"]);

      const listed = await runWarden(env, "endpoints", "list");
      assert.match(listed.stdout, new RegExp(`${endpoint.id} +${hook.url.replace(/[/.]/g, "\\$&")} +enabled`));

      const through = await runWarden(env, "events", "send", "payment.refunded", "--json");
      assert.equal(through.code, 0, through.stderr);
      assert.equal(through.json().deliveries, 1);
      await waitFor(() => hook.received.length === 1, "the service delivered the example");
      const delivered = hook.received[0] as Received;
      assert.equal(verify(endpoint.secret, delivered).id, through.json().event.id);
      assert.equal(delivered.headers["webhook-id"], through.json().event.id);

      let deliveries = { data: [] as { status: string; event: string }[] };
      for (let i = 0; i < 100 && deliveries.data[0]?.status !== "succeeded"; i++) {
        deliveries = (await runWarden(env, "deliveries", "list", "--endpoint", endpoint.id, "--json")).json();
        if (deliveries.data[0]?.status !== "succeeded") await new Promise((r) => setTimeout(r, 25));
      }
      assert.deepEqual(
        deliveries.data.map((d) => [d.event, d.status]),
        [[through.json().event.id, "succeeded"]],
      );

      const bad = await runWarden(env, "deliveries", "recover", "--endpoint", endpoint.id, "--since", "year");
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /hour, day, week or month/);
      const recovered = await runWarden(env, "deliveries", "recover", "--endpoint", endpoint.id, "--since", "day", "--json");
      assert.deepEqual(recovered.json(), { queued: 0 });

      assert.equal((await runWarden(env, "endpoints", "remove", endpoint.id)).code, 0);
      assert.match((await runWarden(env, "endpoints", "list")).stdout, /No endpoints/);
      const gone = await runWarden(env, "endpoints", "remove", endpoint.id);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /No webhook endpoint/);
    });

    test("deliveries list --status and resend, with --api-key and --base-url instead of the environment", async () => {
      const { env } = await setUp(dialect);
      const flags = ["--api-key", env.WARDEN_API_KEY, "--base-url", env.WARDEN_BASE_URL];
      const bare = { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME };
      const healthy = await receiver(200);
      const failing = await receiver(500);
      const good = (await runWarden(bare, "endpoints", "add", healthy.url, ...flags, "--json")).json();
      const bad = (await runWarden(bare, "endpoints", "add", failing.url, ...flags, "--json")).json();
      assert.match(good.id, /^ep_/);
      const sent = await runWarden(bare, "events", "send", "payment.disputed", ...flags, "--json");
      assert.equal(sent.code, 0, sent.stderr);
      await waitFor(() => healthy.received.length === 1 && failing.received.length === 1, "the first attempts reached both receivers");

      const listOf = async (endpoint: string, status: string) => {
        const listed = await runWarden(bare, "deliveries", "list", "--endpoint", endpoint, "--status", status, ...flags, "--json");
        assert.equal(listed.code, 0, listed.stderr);
        return listed.json().data as { id: string; status: string; attempts: unknown[] }[];
      };
      const settled = async (endpoint: string, status: string) => {
        let found = await listOf(endpoint, status);
        for (let i = 0; i < 100 && found[0]?.attempts.length !== 1; i++) {
          await new Promise((r) => setTimeout(r, 25));
          found = await listOf(endpoint, status);
        }
        return found;
      };
      const [done] = await settled(good.id, "succeeded");
      const [retrying] = await settled(bad.id, "pending");
      assert.deepEqual([done?.attempts.length, retrying?.attempts.length], [1, 1], "a 500 leaves its delivery pending, its retry scheduled");
      assert.deepEqual(await listOf(good.id, "pending"), []);
      assert.deepEqual(await listOf(bad.id, "succeeded"), []);
      assert.deepEqual(await listOf(bad.id, "failed"), []);

      // A resend is one more attempt with the same webhook-id, also while retries are under
      // way: then it goes at once, ahead of the retry scheduled 5 s after the first failure.
      const resent = await runWarden(bare, "deliveries", "resend", String(done?.id), ...flags);
      assert.equal(resent.code, 0, resent.stderr);
      assert.doesNotMatch(resent.stdout, /still being retried/);
      await waitFor(() => healthy.received.length === 2, "the resend reached the receiver");
      assert.equal(healthy.received[1]?.headers["webhook-id"], healthy.received[0]?.headers["webhook-id"]);
      const busy = await runWarden(bare, "deliveries", "resend", String(retrying?.id), ...flags);
      assert.equal(busy.code, 0, busy.stderr);
      assert.match(busy.stdout, /still being retried: should this attempt fail, its next scheduled retry stands/);
      await waitFor(() => failing.received.length >= 2, "the resend of the delivery being retried went at once");
      assert.equal(failing.received[1]?.headers["webhook-id"], failing.received[0]?.headers["webhook-id"]);

      const unknown = await runWarden(bare, "deliveries", "resend", "dlv_000000000000000000000000", ...flags);
      assert.equal(unknown.code, 1);
      const badStatus = await runWarden(bare, "deliveries", "list", "--status", "lost", ...flags);
      assert.equal(badStatus.code, 1);
      const wrongBase = await runWarden(bare, "endpoints", "list", "--api-key", env.WARDEN_API_KEY, "--base-url", "http://127.0.0.1:9");
      assert.equal(wrongBase.code, 1);
    });

    test("endpoints secret, disable and enable (saying what recover would resend); the base URL may be the API's, ending in /api/v1", async () => {
      const { env } = await setUp(dialect);
      // The specification's {base_url}, with or without a final slash.
      const api = { ...env, WARDEN_BASE_URL: `${env.WARDEN_BASE_URL}/api/v1` };
      const failing = await receiver(500);
      const added = await runWarden(api, "endpoints", "add", failing.url, "--json");
      assert.equal(added.code, 0, added.stderr);
      const endpoint = added.json();
      const secret = await runWarden({ ...env, WARDEN_BASE_URL: `${env.WARDEN_BASE_URL}/api/v1/` }, "endpoints", "secret", endpoint.id);
      assert.equal(secret.code, 0, secret.stderr);
      assert.equal(secret.stdout.trim(), endpoint.secret);
      assert.deepEqual((await runWarden(env, "endpoints", "secret", endpoint.id, "--json")).json(), { id: endpoint.id, secret: endpoint.secret });

      assert.equal((await runWarden(api, "events", "send", "payment.refunded")).code, 0);
      await waitFor(() => failing.received.length === 1, "the first attempt reached the receiver");
      const disabled = await runWarden(api, "endpoints", "disable", endpoint.id, "--json");
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.deepEqual([disabled.json().enabled, disabled.json().disabled_reason], [false, "manual"]);
      assert.match((await runWarden(env, "endpoints", "list")).stdout, /disabled \(manual\)/);

      // Disabling failed the delivery still being retried: enabling says recover can resend it.
      const enabled = await runWarden(api, "endpoints", "enable", endpoint.id);
      assert.equal(enabled.code, 0, enabled.stderr);
      assert.match(enabled.stdout, new RegExp(`Enabled ${endpoint.id}\\. 1 failed delivery from the last 30 days \\(1 from the last day\\)`));
      assert.match(enabled.stdout, new RegExp(`warden deliveries recover --endpoint ${endpoint.id} --since`));
      const again = (await runWarden(api, "endpoints", "enable", endpoint.id, "--json")).json();
      assert.deepEqual(
        [again.endpoint.enabled, again.recoverable],
        [true, { hour: 1, day: 1, week: 1, month: 1, retrying: { hour: 0, day: 0, week: 0, month: 0 } }],
      );
      assert.deepEqual((await runWarden(api, "deliveries", "recover", "--endpoint", endpoint.id, "--since", "hour", "--json")).json(), { queued: 1 });
      await waitFor(() => failing.received.length === 2, "the recovered delivery was attempted again");

      const missing = await runWarden(api, "endpoints", "enable", "ep_000000000000000000000000");
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /No webhook endpoint/);
    });

    test("endpoints rotate-secret prints the new secret once; deliveries then verify with the new and the old one", async () => {
      const { env } = await setUp(dialect);
      const hook = await receiver();
      const endpoint = (await runWarden(env, "endpoints", "add", hook.url, "--json")).json();
      const rotated = await runWarden(env, "endpoints", "rotate-secret", endpoint.id);
      assert.equal(rotated.code, 0, rotated.stderr);
      const [, secret, until] =
        /^New signing secret of ep_\w+: (whsec_\S+)\nUntil (\S+) every delivery is signed with it and with the old one/.exec(rotated.stdout) ?? [];
      assert.ok(secret && until, rotated.stdout);
      assert.notEqual(secret, endpoint.secret);
      assert.ok(Math.abs(Date.parse(until) - Date.now() - 24 * 3_600_000) < 60_000, "the old secret signs for 24 hours");
      assert.equal((await runWarden(env, "endpoints", "secret", endpoint.id)).stdout.trim(), secret);

      assert.equal((await runWarden(env, "events", "send", "payment.refunded")).code, 0);
      await waitFor(() => hook.received.length === 1, "the delivery arrived");
      const [delivery] = hook.received;
      assert.ok(delivery);
      assert.equal(verify(secret, delivery).type, "payment.refunded");
      assert.equal(verify(endpoint.secret, delivery).type, "payment.refunded");

      const json = (await runWarden(env, "endpoints", "rotate-secret", endpoint.id, "--json")).json();
      assert.deepEqual(Object.keys(json), ["id", "secret", "previous_secret_expires_at"]);
      const missing = await runWarden(env, "endpoints", "rotate-secret", "ep_000000000000000000000000");
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /No webhook endpoint/);
    });

    test("example events are limited per workspace per day, both ways together", async () => {
      const { env } = await setUp(dialect, { WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "2" });
      const hook = await receiver();
      assert.equal((await runWarden(env, "events", "send", "purchase.completed", "--url", hook.url)).code, 0);
      assert.equal((await runWarden(env, "events", "send", "purchase.completed")).code, 0);
      const refused = await runWarden(env, "events", "send", "purchase.completed", "--url", hook.url, "--json");
      assert.equal(refused.code, 1);
      assert.equal(JSON.parse(refused.stderr).error.type, "rate_limit_error");
      assert.equal(hook.received.length, 1);
    });
  });
}
