// The keys that sign access tokens: made on the first start, rotated by the operator,
// shared by every process through the database, sealed there under WARDEN_SECRET_KEY.
// Each process keeps the active private key in memory (the access check signs on every
// call) and reads the keys again at most KEY_REFRESH_MS after it last did, so a rotation
// made by another process signs everywhere within a minute, without a restart.
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db, Executor } from "../db/database.js";
import type { SecretBox } from "../webhooks/secret-box.js";
import { MAX_TOKEN_SECONDS, type Signer } from "./access-token.js";
import { deleteSigningKeys, insertSigningKey, listSigningKeys, type StoredSigningKey } from "./signing-key.store.js";

/** How long a process signs with the key it read before it reads the keys again. */
export const KEY_REFRESH_MS = 60_000;
/**
 * How long a key stays published after the next one was made: a process may sign with
 * it for up to KEY_REFRESH_MS more, and its last token lives MAX_TOKEN_SECONDS; the
 * rest is a margin for clocks that disagree. 20 minutes in all.
 */
export const PUBLISHED_AFTER_RETIREMENT_MS = MAX_TOKEN_SECONDS * 1000 + KEY_REFRESH_MS + 240_000;

/** A public key as the JWK Set serves it. */
export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

export interface SigningKeyState {
  kid: string;
  generation: number;
  createdAt: number;
  /** When the next key was made and this one stopped signing; null for the active key. */
  retiredAt: number | null;
  /** Until when the key is in the JWK Set; null while it signs. */
  publishedUntil: number | null;
  state: "active" | "retired" | "expired";
}

/** RFC 7638: the SHA-256 of the required members in lexical order; stable across processes and restarts. */
function thumbprint(x: string): string {
  return createHash("sha256")
    .update(JSON.stringify({ crv: "Ed25519", kty: "OKP", x }))
    .digest("base64url");
}

function newKey(secretBox: SecretBox, generation: number, now: number): StoredSigningKey {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  if (typeof jwk.x !== "string" || typeof jwk.d !== "string") throw new Error("node:crypto exported an Ed25519 key without x or d");
  return { kid: thumbprint(jwk.x), generation, publicX: jwk.x, privateSealed: secretBox.seal(jwk.d), createdAt: now };
}

/** Each key with when it stopped signing (the next key's creation) and until when it is published. */
function statesOf(keys: readonly StoredSigningKey[], now: number): SigningKeyState[] {
  return keys.map((key, i) => {
    const retiredAt = i === 0 ? null : (keys[i - 1] as StoredSigningKey).createdAt;
    const publishedUntil = retiredAt === null ? null : retiredAt + PUBLISHED_AFTER_RETIREMENT_MS;
    const state = retiredAt === null ? "active" : now < (publishedUntil as number) ? "retired" : "expired";
    return { kid: key.kid, generation: key.generation, createdAt: key.createdAt, retiredAt, publishedUntil, state };
  });
}

/**
 * Makes the first key if there is none. Processes starting together over one database
 * each try generation 1; the unique generation lets exactly one of them in.
 */
export async function ensureSigningKey(ex: Executor, secretBox: SecretBox, now: number): Promise<void> {
  const existing = await ex.selectFrom("signing_keys").select("kid").limit(1).executeTakeFirst();
  if (!existing) await insertSigningKey(ex, newKey(secretBox, 1, now));
}

/** The keys, newest first, with their state. */
export async function listSigningKeyStates(ex: Executor, now: number): Promise<SigningKeyState[]> {
  return statesOf(await listSigningKeys(ex), now);
}

/**
 * Adds a key that signs from now on (in every process within KEY_REFRESH_MS) and drops
 * the keys whose publication has ended. Two rotations at the same moment make one key:
 * the loser answers the winner's.
 */
export async function rotateSigningKey(db: Db, secretBox: SecretBox, now: number): Promise<{ active: SigningKeyState; pruned: string[] }> {
  const before = await listSigningKeys(db);
  const generation = (before[0]?.generation ?? 0) + 1;
  await insertSigningKey(db, newKey(secretBox, generation, now));
  const states = statesOf(await listSigningKeys(db), now);
  const expired = states.filter((s) => s.state === "expired").map((s) => s.kid);
  await deleteSigningKeys(db, expired);
  return { active: states[0] as SigningKeyState, pruned: expired };
}

interface Loaded {
  at: number;
  signer: Signer;
  states: SigningKeyState[];
  publicX: Map<string, string>;
}

/** This process's copy of the keys: the one that signs (opened), and those to publish. */
export class SigningKeys {
  private loaded: Loaded | null = null;
  private loading: Promise<Loaded> | null = null;
  /** Opened private keys by kid: a key is opened once in the life of the process. */
  private readonly opened = new Map<string, KeyObject>();

  constructor(
    private readonly db: Db,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** The key that signs now. */
  async signer(): Promise<Signer> {
    return (await this.current()).signer;
  }

  /** The public keys of the JWK Set: the active one and the retired ones still published. */
  async publicKeys(): Promise<PublicJwk[]> {
    const loaded = await this.current();
    const now = this.clock.now();
    return loaded.states
      .filter((s) => s.publishedUntil === null || now < s.publishedUntil)
      .map((s) => ({ kty: "OKP", crv: "Ed25519", x: loaded.publicX.get(s.kid) as string, kid: s.kid, alg: "EdDSA", use: "sig" }));
  }

  /** Reads the keys again at the next use (after this process rotated them). */
  forget(): void {
    this.loaded = null;
  }

  private current(): Promise<Loaded> | Loaded {
    const now = this.clock.now();
    const loaded = this.loaded;
    // A clock moved back (tests) reads again as well.
    if (loaded && now >= loaded.at && now - loaded.at < KEY_REFRESH_MS) return loaded;
    this.loading ??= this.load(now).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(now: number): Promise<Loaded> {
    let keys = await listSigningKeys(this.db);
    if (keys.length === 0) {
      await ensureSigningKey(this.db, this.secretBox, now);
      keys = await listSigningKeys(this.db);
    }
    const active = keys[0] as StoredSigningKey;
    let key = this.opened.get(active.kid);
    if (!key) {
      key = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", x: active.publicX, d: this.secretBox.open(active.privateSealed) }, format: "jwk" });
      this.opened.set(active.kid, key);
    }
    const encodedHeader = Buffer.from(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid: active.kid })).toString("base64url");
    const loaded: Loaded = {
      at: now,
      signer: { kid: active.kid, key, encodedHeader },
      states: statesOf(keys, now),
      publicX: new Map(keys.map((k) => [k.kid, k.publicX])),
    };
    this.loaded = loaded;
    return loaded;
  }
}
