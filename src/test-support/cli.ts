import assert from "node:assert/strict";
import { main } from "../cli.js";
import { unique } from "./harness.js";

/** `warden …` in this process, with this environment, its output captured. */
export async function runWarden(env: Record<string, string>, ...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

/** `warden … --json`, which must succeed: its answer. */
export async function wardenJson<T = Record<string, unknown>>(env: Record<string, string>, ...argv: string[]): Promise<T> {
  const run = await runWarden(env, ...argv, "--json");
  assert.equal(run.code, 0, `${argv.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

/** An owner, a Pro workspace and its tool (`tabmaster` unless named), made as an operator does with `warden admin`. */
export async function seedThroughCli(
  env: Record<string, string>,
  name: string,
  tool: { id: string; name: string } = { id: "tabmaster", name: "Tab Master" },
): Promise<{ owner: string; slug: string }> {
  const owner = `${unique("o")}@example.com`;
  const slug = unique("ws");
  await wardenJson(env, "admin", "owner", "create", "--email", owner);
  await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", name, "--owner", owner, "--plan", "pro");
  await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", tool.id, "--name", tool.name);
  return { owner, slug };
}

/** `warden admin plan create` of a tool's plan; `more` adds options (`--amount-cents`, `--interval` …). */
export function planThroughCli(
  env: Record<string, string>,
  at: { slug: string; tool: string },
  plan: { id: string; name: string; billing: string },
  ...more: string[]
) {
  return wardenJson(
    env,
    "admin",
    "plan",
    "create",
    "--workspace",
    at.slug,
    "--tool",
    at.tool,
    "--id",
    plan.id,
    "--name",
    plan.name,
    "--billing",
    plan.billing,
    ...more,
  );
}
