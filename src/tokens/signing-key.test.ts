// The keys behind access tokens: one key however many processes start at once, sealed at
// rest, the same in every process, and a rotation that every process picks up within a
// minute while the old key stays published until its last token has expired. SQLite and
// PostgreSQL. Rotation changes the file's database: this file's tests expect no key.
import assert from "node:assert/strict";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { describe, test } from "node:test";
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet, jwtVerify } from "jose";
import { main } from "../cli.js";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { migrateToLatest, openStorage } from "../db/database.js";
import { createServices } from "../services.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, privateDatabaseEnv, seedWorkspace, storageFor, testApi, testServices } from "../test-support/harness.js";
import { SecretBox } from "../webhooks/secret-box.js";
import { ensureSigningKey, KEY_REFRESH_MS, PUBLISHED_AFTER_RETIREMENT_MS, rotateSigningKey } from "./signing-key.service.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);
const SECRET = "signing-key-test-secret-0123456789abcdef";

async function warden(env: Record<string, string>, ...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
  return { code, stdout, stderr };
}

for (const dialect of DIALECTS) {
  describe(`signing keys (${dialect})`, () => {
    test("services starting together over an empty database make exactly one key, and all sign with it", async () => {
      const config = parseConfig({ ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: SECRET });
      const open = () => openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      const first = open();
      await migrateToLatest(first.db, first.dialect);
      const storages = [first, open(), open(), open()];
      const clock = new ManualClock();
      const all = await Promise.all([...storages, ...storages].map((storage) => createServices(config, { clock, storage })));
      try {
        const rows = await first.db.selectFrom("signing_keys").select(["kid", "generation"]).execute();
        assert.equal(rows.length, 1, JSON.stringify(rows));
        const signers = await Promise.all(all.map((services) => services.signingKeys.signer()));
        assert.deepEqual(new Set(signers.map((s) => s.kid)), new Set([rows[0]?.kid]));

        // On PostgreSQL the migrations' lock spaces those starts out; here the first
        // insert itself is raced, each on its own connection, all reading "no key" first.
        await first.db.deleteFrom("signing_keys").execute();
        await Promise.all([...storages, ...storages].map((storage, i) => ensureSigningKey(storage.db, all[i]?.secretBox as SecretBox, clock.now())));
        assert.equal((await first.db.selectFrom("signing_keys").select("kid").execute()).length, 1);
      } finally {
        for (const storage of storages) await storage.close();
      }
    });

    test("the private key is sealed under WARDEN_SECRET_KEY: the stored row does not hold it in clear", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const token = (await check(api, ws.tool, await signIn(api, ws, `sealed-${ws.slug}@example.com`))).json().token as string;
      const { kid } = decodeProtectedHeader(token);
      const row = await services.db.selectFrom("signing_keys").selectAll().where("kid", "=", String(kid)).executeTakeFirstOrThrow();

      const d = services.secretBox.open(row.private_sealed);
      assert.match(d, /^[A-Za-z0-9_-]{43}$/, "the JWK d of an Ed25519 key");
      const text = JSON.stringify(row);
      assert.ok(!text.includes(d), "d is not stored in clear");
      assert.ok(!text.includes(Buffer.from(d, "base64url").toString("hex")));
      assert.throws(() => new SecretBox("another-secret-key-0123456789abcdefghij").open(row.private_sealed));
      // What it seals is the private half of the published key, and the kid is the key's thumbprint.
      const publicJwk = createPublicKey(createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", x: row.public_x, d }, format: "jwk" })).export({ format: "jwk" });
      assert.equal(publicJwk.x, row.public_x);
      assert.equal(await calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: row.public_x }), row.kid);
      const jwks = (await api.request({ url: "/.well-known/jwks.json" })).json() as JSONWebKeySet;
      assert.deepEqual(jwks.keys.find((k) => k.kid === row.kid)?.x, row.public_x);
      await jwtVerify(token, createLocalJWKSet(jwks), { audience: `${ws.slug}:test`, currentDate: new Date(clock.now()) });
    });

    test("a rotation signs everywhere within a minute; the old key verifies its tokens until they expire, then leaves the set", async () => {
      const { services, clock, config } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // The operator's `warden admin signing-key rotate`: another process over the same database.
      const operator = await createServices(config, { clock, storage: { ...(await storageFor(dialect)), close: async () => {} } });
      const device = await signIn(api, ws, `rotate-${ws.slug}@example.com`);
      const audience = `${ws.slug}:test`;
      const jwks = async () => (await api.request({ url: "/.well-known/jwks.json" })).json() as JSONWebKeySet;
      const verify = async (token: string, at = clock.now()) => jwtVerify(token, createLocalJWKSet(await jwks()), { audience, currentDate: new Date(at) });

      const before = (await check(api, ws.tool, device)).json().token as string;
      const oldKid = decodeProtectedHeader(before).kid;
      const issuedAt = clock.now();
      clock.advance(1000);
      const rotatedAt = clock.now();
      const { active } = await rotateSigningKey(operator.db, operator.secretBox, rotatedAt);
      assert.notEqual(active.kid, oldKid);

      // Until this process reads the keys again it signs with the old one, which is still published.
      const stale = (await check(api, ws.tool, device)).json().token as string;
      assert.equal(decodeProtectedHeader(stale).kid, oldKid);
      clock.advance(KEY_REFRESH_MS);
      const fresh = (await check(api, ws.tool, device)).json().token as string;
      assert.equal(decodeProtectedHeader(fresh).kid, active.kid);
      assert.deepEqual(
        (await jwks()).keys.map((k) => k.kid),
        [active.kid, oldKid],
      );
      await verify(before);
      await verify(stale);
      await verify(fresh);

      // The old key's last tokens expire; the key stays published a margin longer, then leaves.
      clock.set(rotatedAt + PUBLISHED_AFTER_RETIREMENT_MS - 1);
      assert.deepEqual(
        (await jwks()).keys.map((k) => k.kid),
        [active.kid, oldKid],
      );
      await verify(stale, rotatedAt + 899_000);
      clock.advance(1);
      assert.deepEqual(
        (await jwks()).keys.map((k) => k.kid),
        [active.kid],
      );
      await assert.rejects(verify(before, issuedAt), errors.JWKSNoMatchingKey);
      await verify((await check(api, ws.tool, device)).json().token);

      // The next rotation drops it from the table too.
      const next = await rotateSigningKey(operator.db, operator.secretBox, clock.now());
      assert.deepEqual(next.pruned, [oldKid]);
      const kept = await services.db.selectFrom("signing_keys").select("kid").orderBy("generation", "desc").execute();
      assert.deepEqual(
        kept.map((k) => k.kid),
        [next.active.kid, active.kid],
      );
    });

    test("warden admin signing-key list shows the one active key; rotate makes a second active and retires the first", async () => {
      const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: SECRET };
      const listed = await warden(env, "admin", "signing-key", "list", "--json");
      assert.equal(listed.code, 0, listed.stderr);
      const [first, ...none] = JSON.parse(listed.stdout);
      assert.deepEqual(none, []);
      assert.equal(first.state, "active");
      assert.equal(first.generation, 1);
      assert.equal(first.retired_at, null);

      const rotated = await warden(env, "admin", "signing-key", "rotate");
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.match(rotated.stdout, /signs from now on; running processes take it within 60 seconds/);
      const table = await warden(env, "admin", "signing-key", "list");
      const lines = table.stdout.trim().split("\n");
      assert.match(lines[0] ?? "", /^KID +GENERATION +STATE +CREATED +RETIRED +PUBLISHED UNTIL$/);
      assert.match(lines[1] ?? "", / 2 +active /);
      assert.match(lines[2] ?? "", new RegExp(`^${first.kid} +1 +retired `));
      assert.equal(lines.length, 3);

      const help = await warden(env, "admin", "signing-key");
      assert.match(help.stdout, /warden admin signing-key rotate/);
    });
  });
}
