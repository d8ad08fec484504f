import assert from "node:assert/strict";
import { main } from "../cli.js";

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
