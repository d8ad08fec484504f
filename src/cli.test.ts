import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { main } from "./cli.js";
import { parseConfig } from "./config.js";
import { openStorage } from "./db/database.js";
import { DIALECTS, privateDatabaseEnv, unique } from "./test-support/harness.js";
import { startWarden } from "./test-support/serve.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function warden(env: Record<string, string>, ...argv: string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
  return { code, stdout, stderr };
}

async function wardenJson(env: Record<string, string>, ...argv: string[]): Promise<Record<string, unknown>> {
  const run = await warden(env, ...argv, "--json");
  assert.equal(run.code, 0, `${argv.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

for (const dialect of DIALECTS) {
  describe(`warden CLI (${dialect})`, () => {
    test("sets up a workspace with --json output", async () => {
      const env = await privateDatabaseEnv(dialect);
      const email = `${unique("o")}@example.com`;
      const slug = unique("ws");
      assert.deepEqual(Object.keys(await wardenJson(env, "admin", "owner", "create", "--email", email)).sort(), ["email", "id"]);
      const ws = await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email);
      assert.deepEqual({ slug: ws.slug, plan: ws.plan }, { slug, plan: "hobby" });
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "notes", "--name", "Notes");
      assert.deepEqual(await wardenJson(env, "admin", "tool", "update", "--workspace", slug, "--id", "tabs", "--trial-days", "14"), {
        id: "tabs",
        name: "Tabs",
        workspace: slug,
        trial_days: 14,
      });
      const bundle = await wardenJson(env, "admin", "bundle", "create", "--workspace", slug, "--id", "suite", "--name", "Suite", "--tools", "tabs,notes");
      assert.deepEqual(bundle.tools, ["tabs", "notes"]);
      const plan = await wardenJson(
        env,
        ...["admin", "plan", "create", "--workspace", slug, "--tool", "tabs", "--id", "pro", "--name", "Pro"],
        ...["--billing", "subscription", "--amount-cents", "499", "--currency", "EUR", "--interval", "month", "--default"],
      );
      assert.deepEqual(plan, {
        id: "pro",
        tool: "tabs",
        name: "Pro",
        billing: "subscription",
        amountCents: 499,
        currency: "eur",
        interval: "month",
        default: true,
      });
      const key = await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "live");
      assert.deepEqual(Object.keys(key).sort(), ["id", "key"]);
      assert.match(String(key.id), /^key_[0-9A-Za-z]{24}$/);
      assert.match(String(key.key), /^wk_live_[0-9A-Za-z]{32}$/);
      const revoked = await wardenJson(env, "admin", "key", "revoke", "--id", String(key.id));
      assert.equal(revoked.id, key.id);
    });

    test("refuses bad input with a message and a non-zero exit", async () => {
      const env = await privateDatabaseEnv(dialect);
      const email = `${unique("o")}@example.com`;
      await wardenJson(env, "admin", "owner", "create", "--email", email);
      const slug = unique("ws");
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email);
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      const cases: [string[], number, RegExp][] = [
        [["admin", "owner", "create", "--email", "not-an-address"], 1, /email must be an email address/],
        [["admin", "owner", "create", "--email", email], 1, /exists already/],
        [["admin", "owner", "create"], 2, /--email is required/],
        [["admin", "owner", "create", "--email", email, "--bogus"], 2, /Unknown option/],
        [["admin", "workspace", "create", "--slug", "Bad Slug", "--name", "x", "--owner", email], 1, /slug must be/],
        [["admin", "workspace", "create", "--slug", unique("s"), "--name", "x", "--owner", "nobody@example.com"], 1, /No owner/],
        [["admin", "workspace", "create", "--slug", unique("s"), "--name", "x", "--owner", email, "--plan", "gold"], 1, /plan must be hobby or pro/],
        [["admin", "tool", "create", "--workspace", "missing", "--id", "t", "--name", "T"], 1, /No workspace/],
        [["admin", "tool", "update", "--workspace", "missing", "--id", "t", "--trial-days", "7"], 1, /No workspace/],
        [["admin", "tool", "update", "--workspace", slug, "--id", "nope", "--trial-days", "7"], 1, /No tool "nope"/],
        [["admin", "tool", "update", "--workspace", slug, "--id", "tabs"], 1, /Give --name or --trial-days/],
        [["admin", "tool", "update", "--workspace", slug, "--id", "tabs", "--trial-days=-1"], 1, /--trial-days must be a whole number from 0/],
        [["admin", "tool", "update", "--workspace", slug, "--id", "tabs", "--trial-days", "366"], 1, /--trial-days must be a whole number from 0/],
        [["admin", "tool", "create", "--workspace", slug, "--id", "t2", "--name", "T", "--trial-days", "2.5"], 1, /--trial-days must be/],
        [["admin", "key", "create", "--workspace", "missing", "--env", "test"], 1, /No workspace/],
        [["admin", "key", "revoke", "--id", "key_nope"], 1, /No API key/],
        [["admin", "frobnicate"], 2, /Unknown command/],
      ];
      for (const [argv, code, message] of cases) {
        const run = await warden(env, ...argv);
        assert.equal(run.code, code, `${argv.join(" ")}: ${run.stderr}`);
        assert.match(run.stderr, message, argv.join(" "));
        assert.equal(run.stdout, "");
      }
      const json = await warden(env, "admin", "workspace", "create", "--slug", "Bad Slug", "--name", "x", "--owner", email, "--json");
      assert.deepEqual(JSON.parse(json.stderr).error.param, "slug");
      const key = await warden(env, "admin", "key", "create", "--workspace", unique("nope"), "--env", "staging");
      assert.equal(key.code, 1);
    });

    test("refuses a bad plan, bundle or suspension and writes nothing; a plan can be made for a bundle", async () => {
      const env = await privateDatabaseEnv(dialect);
      const email = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", email);
      const ws = await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email);
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "notes", "--name", "Notes");
      await wardenJson(env, "admin", "bundle", "create", "--workspace", slug, "--id", "suite", "--name", "Suite", "--tools", "tabs");
      const plan = ["admin", "plan", "create", "--workspace", slug, "--id", "refused", "--name", "Refused"];
      const bundle = ["admin", "bundle", "create", "--workspace", slug, "--name", "Refused"];
      const cases: [string[], RegExp][] = [
        [[...plan, "--tool", "tabs", "--bundle", "suite", "--billing", "one_time"], /exactly one of --tool or --bundle/],
        [[...plan, "--billing", "one_time"], /exactly one of --tool or --bundle/],
        [[...plan, "--tool", "tabs", "--billing", "monthly"], /billing must be one_time or subscription/],
        [[...plan, "--tool", "tabs", "--billing", "subscription", "--interval", "week"], /needs --interval month or year/],
        [[...plan, "--tool", "tabs", "--billing", "subscription"], /needs --interval month or year/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--interval", "month"], /one_time plan has no interval/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--currency", "euro"], /currency must be a three-letter code/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--currency", "e1r"], /currency must be a three-letter code/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--amount-cents=-500"], /--amount-cents must be a whole number/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--amount-cents", "4.99"], /--amount-cents must be a whole number/],
        [[...plan, "--tool", "tabs", "--billing", "one_time", "--amount-cents", "99999999999999999999"], /amount-cents must be a whole number/],
        [[...plan, "--bundle", "nosuch", "--billing", "one_time"], /No bundle "nosuch"/],
        [[...bundle, "--id", "more", "--tools", "tabs,ghost"], /No tool "ghost"/],
        [[...bundle, "--id", "more", "--tools", " , "], /names at least one tool/],
        [[...bundle, "--id", "suite", "--tools", "notes"], /Bundle "suite" exists already/],
        [["admin", "owner", "suspend", "--email", "nobody@example.com"], /No owner with email "nobody@example.com"/],
      ];
      for (const [argv, message] of cases) {
        const run = await warden(env, ...argv);
        assert.equal(run.code, 1, `${argv.join(" ")}: ${run.stderr}`);
        assert.match(run.stderr, message, argv.join(" "));
        assert.equal(run.stdout, "");
      }
      // An empty --tools never reaches the use case: the option counts as missing.
      const empty = await warden(env, ...bundle, "--id", "more", "--tools", "");
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /--tools is required/);

      const forBundle = ["admin", "plan", "create", "--workspace", slug, "--bundle", "suite", "--id", "life", "--name", "Life", "--billing", "one_time"];
      const made = await wardenJson(env, ...forBundle);
      assert.deepEqual({ bundle: made.bundle, tool: made.tool, id: made.id }, { bundle: "suite", tool: undefined, id: "life" });

      const config = parseConfig(env);
      const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const { db } = storage;
        const plans = await db.selectFrom("plans").select(["product_kind", "product_id", "id"]).where("workspace_id", "=", String(ws.id)).execute();
        assert.deepEqual(plans, [{ product_kind: "bundle", product_id: "suite", id: "life" }]);
        const bundles = await db.selectFrom("bundles").select(["id", "name"]).where("workspace_id", "=", String(ws.id)).execute();
        assert.deepEqual(bundles, [{ id: "suite", name: "Suite" }]);
        const bundleTools = await db.selectFrom("bundle_tools").select(["bundle_id", "tool_id"]).where("workspace_id", "=", String(ws.id)).execute();
        assert.deepEqual(bundleTools, [{ bundle_id: "suite", tool_id: "tabs" }]);
        const owners = await db.selectFrom("owners").select(["email", "suspended_at"]).where("email_norm", "in", [email, "nobody@example.com"]).execute();
        assert.deepEqual(owners, [{ email, suspended_at: null }]);
      } finally {
        await storage.close();
      }
    });

    test("a key revoked or an owner suspended while the server runs is refused on the next request", async () => {
      const env = await privateDatabaseEnv(dialect);
      const email = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", email);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email, "--plan", "pro");
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
      const key = await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test");
      const base = (await startWarden(env)).baseUrl;
      const headers = { authorization: `Bearer ${key.key}`, "content-type": "application/json" };

      // The README walk-through, over a real socket.
      const created = await fetch(`${base}/api/v1/tools/tabs/grants`, {
        method: "POST",
        headers,
        body: JSON.stringify({ email: "ada.lovelace@gmail.com", days: 30, note: "beta tester" }),
      });
      assert.equal(created.status, 201);
      const customer = await fetch(`${base}/api/v1/tools/tabs/customers/adalovelace%40gmail.com`, { headers });
      assert.equal(customer.status, 200);
      assert.deepEqual(((await customer.json()) as { via: string }).via, "grant");

      await wardenJson(env, "admin", "owner", "suspend", "--email", email);
      assert.equal((await fetch(`${base}/api/v1/tools/tabs/customers?limit=1`, { headers })).status, 401);
      await wardenJson(env, "admin", "owner", "unsuspend", "--email", email);
      assert.equal((await fetch(`${base}/api/v1/tools/tabs/customers?limit=1`, { headers })).status, 200);

      await wardenJson(env, "admin", "key", "revoke", "--id", String(key.id));
      const refused = await fetch(`${base}/api/v1/tools/tabs/customers?limit=1`, { headers });
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { error: { type: string } }).error.type, "authentication_error");
    });
  });
}

test("a bad configuration value stops the command with a clear message", async () => {
  const run = await warden({ WARDEN_LIMIT_LOOKUPS_PER_DAY: "lots" }, "admin", "owner", "create", "--email", "a@example.com");
  assert.equal(run.code, 2);
  assert.match(run.stderr, /WARDEN_LIMIT_LOOKUPS_PER_DAY must be a whole number/);
});

test("help lists every command", async () => {
  const run = await warden({}, "help");
  assert.equal(run.code, 0);
  for (const word of ["serve", "admin owner create", "admin key revoke", "admin plan create"]) assert.ok(run.stdout.includes(word), word);
});
