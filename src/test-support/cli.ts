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

/** An owner, a Pro workspace and its `tabmaster` tool, made as an operator does with `warden admin`. */
export async function seedThroughCli(env: Record<string, string>, name: string): Promise<{ owner: string; slug: string }> {
  const owner = `${unique("o")}@example.com`;
  const slug = unique("ws");
  await wardenJson(env, "admin", "owner", "create", "--email", owner);
  await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", name, "--owner", owner, "--plan", "pro");
  await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabmaster", "--name", "Tab Master");
  return { owner, slug };
}
