// `warden admin feature|meter …` and `admin plan terms` as an operator types them: what a
// tool declares and what a plan gives, shown back as a table and as JSON; bad input is
// one line naming the option, and changes nothing. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runWarden, seedThroughCli, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv } from "../test-support/harness.js";

for (const dialect of DIALECTS) {
  describe(`warden admin feature, meter and plan terms (${dialect})`, () => {
    test("a tool's features and meters, a plan's features and allowances, a pack's credits", async () => {
      const env = await privateDatabaseEnv(dialect);
      const { slug } = await seedThroughCli(env, "Acme");
      const tool = ["--workspace", slug, "--tool", "tabmaster"];
      await wardenJson(env, "admin", "feature", "add", ...tool, "--id", "export", "--name", "Export");
      await wardenJson(env, "admin", "feature", "add", ...tool, "--id", "sync", "--name", "Sync");
      const meter = await wardenJson(env, "admin", "meter", "add", ...tool, "--id", "summaries", "--name", "Summaries", "--unit", "summaries", "--free", "10");
      assert.equal(meter.free_allowance, 10);
      await wardenJson(
        env,
        "admin",
        "plan",
        "create",
        ...tool,
        "--id",
        "pro",
        "--name",
        "Pro",
        "--billing",
        "subscription",
        "--interval",
        "month",
        "--amount-cents",
        "500",
      );
      const pro = await wardenJson(env, "admin", "plan", "terms", ...tool, "--id", "pro", "--features", "sync,export", "--allowances", "summaries=500");
      assert.deepEqual(pro, {
        plan: "pro",
        tool: "tabmaster",
        features: ["export", "sync"],
        allowances: { summaries: 500 },
        credits: {},
        credits_expire_days: null,
      });

      const pack = await wardenJson(
        env,
        "admin",
        "plan",
        "create",
        ...tool,
        "--id",
        "pack",
        "--name",
        "1,000 summaries",
        "--billing",
        "one_time",
        "--amount-cents",
        "900",
        "--pack",
      );
      assert.equal(pack.gives_access, false);
      await wardenJson(env, "admin", "plan", "terms", ...tool, "--id", "pack", "--credits", "summaries=1000", "--credits-expire-days", "365");
      const shown = await runWarden(env, "admin", "plan", "terms", ...tool, "--id", "pack");
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /credits +summaries 1000 \(each purchase, lasting 365 days\)/);

      const listed = await runWarden(env, "admin", "meter", "list", ...tool);
      assert.match(listed.stdout, /summaries +summaries +10 +Summaries/);
      const features = await wardenJson<{ id: string }[]>(env, "admin", "feature", "list", ...tool);
      assert.deepEqual(
        features.map((f) => f.id),
        ["export", "sync"],
      );

      // Refusals name the option and leave the terms as they were.
      const unknown = await runWarden(env, "admin", "plan", "terms", ...tool, "--id", "pro", "--features", "export,print");
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /declares no feature "print": it declares export, sync/);
      const malformed = await runWarden(env, "admin", "plan", "terms", ...tool, "--id", "pro", "--allowances", "summaries:5", "--json");
      assert.equal(malformed.code, 1);
      assert.equal(JSON.parse(malformed.stderr).error.param, "allowances");
      const subscriptionCredits = await runWarden(env, "admin", "plan", "terms", ...tool, "--id", "pro", "--credits", "summaries=5");
      assert.match(subscriptionCredits.stderr, /one-time plan/);
      assert.deepEqual((await wardenJson(env, "admin", "plan", "terms", ...tool, "--id", "pro")).features, ["export", "sync"]);
    });
  });
}
