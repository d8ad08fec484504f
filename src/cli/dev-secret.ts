import { mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { newWebhookSecret } from "../webhooks/signature.js";
import { type CliEnv, CliError } from "./command.js";

/** The machine's development signing secret lives in the user's config folder. */
export function devSecretPath(env: CliEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "warden", "dev-webhook-secret");
}

/** The development secret, made on first use on this machine. */
export async function loadDevSecret(env: CliEnv): Promise<string> {
  const path = devSecretPath(env);
  try {
    return await readOrMakeDevSecret(path);
  } catch (error) {
    // A folder that cannot be written (or is a file) is the machine's setup, not a bug: one line.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== "string" || !code.startsWith("E")) throw error;
    throw new CliError(
      "api_error",
      `cannot keep the development signing secret in ${path}: ${(error as Error).message}; set XDG_CONFIG_HOME (or HOME) to a folder you can write to`,
    );
  }
}

async function readOrMakeDevSecret(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  const secret = newWebhookSecret();
  try {
    await writeFile(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return (await readFile(path, "utf8")).trim();
    throw error;
  }
}
