// Without WARDEN_SECRET_KEY a development key is made in the data folder on first start
// (mode 0600) and kept: every process on that folder seals and opens with it.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { sql } from "kysely";
import { ManualClock } from "./clock.js";
import { parseConfig } from "./config.js";
import { createServices } from "./services.js";

async function servicesIn(dataDir: string) {
  const services = await createServices(parseConfig({ WARDEN_DATA_DIR: dataDir }), { clock: new ManualClock() });
  after(() => services.close());
  return services;
}

describe("the development secret key", () => {
  test("is made once in the data folder, private to its user, and reused by the next start", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-secret-"));
    after(() => rm(dir, { recursive: true, force: true }));
    const first = await servicesIn(dir);
    const file = join(dir, "secret.key");
    const key = (await readFile(file, "utf8")).trim();
    assert.equal(Buffer.from(key, "base64").length, 32);
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const sealed = first.secretBox.seal("whsec_example");
    const again = await servicesIn(dir);
    assert.equal(again.secretBox.open(sealed), "whsec_example");
    assert.equal((await readFile(file, "utf8")).trim(), key, "not made again");

    const otherDir = await mkdtemp(join(tmpdir(), "warden-secret-"));
    after(() => rm(otherDir, { recursive: true, force: true }));
    const elsewhere = await servicesIn(otherDir);
    assert.throws(() => elsewhere.secretBox.open(sealed), "another folder's key opens nothing");
  });
});

test("WARDEN_SQLITE_MMAP_MB maps that much of the SQLite file; unset maps none", async () => {
  const dir = await mkdtemp(join(tmpdir(), "warden-mmap-"));
  after(() => rm(dir, { recursive: true, force: true }));
  const mmapSize = async (env: Record<string, string>) => {
    const services = await createServices(parseConfig({ WARDEN_DATA_DIR: dir, ...env }), { clock: new ManualClock() });
    try {
      return (await sql<{ mmap_size: number }>`pragma mmap_size`.execute(services.db)).rows[0]?.mmap_size;
    } finally {
      await services.close();
    }
  };
  assert.equal(await mmapSize({}), 0);
  assert.equal(await mmapSize({ WARDEN_SQLITE_MMAP_MB: "256" }), 256 * 1024 * 1024);
});
