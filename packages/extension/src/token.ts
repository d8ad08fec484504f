// The signed access token: a compact JWS (EdDSA over Ed25519) that Warden adds to every
// access answer. Verified with WebCrypto against Warden's JWK Set, so an answer kept in
// storage is trusted for what its signature says and no longer than its `exp`.
import { WardenError } from "./errors.js";
import type { Clock, Storage } from "./platform.js";

export type Via = "licence" | "subscription" | "trial" | "grant";

/** What a token says (its claims, as Warden signs them). */
export interface AccessClaims {
  iss: string;
  /** `<workspace slug>:<env>` */
  aud: string;
  /** The person's id, or the device's for a device activated with a licence key. */
  sub: string;
  email: string | null;
  workspace: string;
  env: "test" | "live";
  tool: string;
  entitled: boolean;
  via: Via | null;
  plan: string | null;
  /** The tool's features the person holds, sorted; [] when none. */
  features: string[];
  /** Epoch seconds. */
  trial_ends_at: number | null;
  /** Epoch seconds. */
  iat: number;
  /** Epoch seconds; at most 900 after iat. */
  exp: number;
}

export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
  use?: string;
}

/** Warden never signs a token for longer than a revocation may take to lock. */
const MAX_LIFETIME_S = 900;
/** A key set older than this is fetched again, so a key Warden dropped stops being trusted within the hour. */
const KEY_SET_MAX_AGE_MS = 3600_000;

const invalid = (message: string) => new WardenError("invalid_token", message);

function base64UrlBytes(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw invalid("The token is not base64url.");
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "==".slice(0, (4 - (text.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function base64UrlJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(base64UrlBytes(text)));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  throw invalid("The token is not a JWS.");
}

/** The token's parts, undecided: header, claims, what was signed and the signature. */
export function parseToken(token: string) {
  const parts = token.split(".");
  const [header, payload, signature] = parts;
  if (parts.length !== 3 || header === undefined || payload === undefined || signature === undefined) throw invalid("The token is not a compact JWS.");
  return {
    header: base64UrlJson(header),
    claims: base64UrlJson(payload),
    signed: new TextEncoder().encode(`${header}.${payload}`),
    signature: base64UrlBytes(signature),
  };
}

const isSeconds = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const isStringOrNull = (v: unknown) => v === null || typeof v === "string";

/**
 * The claims, checked for what this extension asked (its workspace, environment and
 * tool) and for their shape. Time is the caller's to judge: see `lifetimeMs`.
 */
export function checkClaims(claims: Record<string, unknown>, expected: { workspace: string; env: string; tool: string }): AccessClaims {
  const c = claims as Partial<AccessClaims>;
  if (c.workspace !== expected.workspace || c.env !== expected.env || c.aud !== `${expected.workspace}:${expected.env}`) {
    throw invalid("The token is for another workspace or environment.");
  }
  if (c.tool !== expected.tool) throw invalid("The token is for another tool.");
  if (typeof c.entitled !== "boolean" || typeof c.sub !== "string" || !isStringOrNull(c.email) || !isStringOrNull(c.plan)) {
    throw invalid("The token's claims are not Warden's.");
  }
  if (!isSeconds(c.iat) || !isSeconds(c.exp) || c.exp <= c.iat || c.exp - c.iat > MAX_LIFETIME_S) throw invalid("The token's iat and exp are not Warden's.");
  if (!(c.trial_ends_at === null || isSeconds(c.trial_ends_at))) throw invalid("The token's trial_ends_at is not Warden's.");
  // A Warden older than features signs none: that person holds no feature the library can name.
  const features = c.features === undefined ? [] : c.features;
  if (!Array.isArray(features) || !features.every((f) => typeof f === "string")) throw invalid("The token's features are not Warden's.");
  return { ...c, features } as AccessClaims;
}

/** How long a token is good for from when it arrived: its exp - iat, whatever the device's clock says the date is. */
export const lifetimeMs = (claims: AccessClaims) => (claims.exp - claims.iat) * 1000;

interface StoredKeySet {
  keys: Jwk[];
  fetchedAt: number;
}

/**
 * Warden's public keys, kept in the extension's storage: fetched when missing, older
 * than an hour, or when a token names a key the set does not have (Warden rotated it).
 */
export class KeySet {
  readonly #imported = new Map<string, Promise<CryptoKey>>();
  #set: StoredKeySet | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly storageKey: string,
    private readonly clock: Clock,
    private readonly fetchSet: () => Promise<Jwk[]>,
  ) {}

  async #load(refresh: boolean): Promise<StoredKeySet> {
    if (!refresh) {
      this.#set ??= ((await this.storage.get(this.storageKey)) as StoredKeySet | undefined) ?? null;
      if (this.#set && this.clock.now() - this.#set.fetchedAt < KEY_SET_MAX_AGE_MS) return this.#set;
    }
    try {
      this.#set = { keys: await this.fetchSet(), fetchedAt: this.clock.now() };
    } catch (error) {
      // Offline with a set kept from before: an hour-old set still verifies what it verified.
      if (this.#set && !refresh) return this.#set;
      throw error;
    }
    this.#imported.clear();
    await this.storage.set(this.storageKey, this.#set);
    return this.#set;
  }

  async #key(kid: string): Promise<CryptoKey | null> {
    const cached = this.#imported.get(kid);
    if (cached) return cached;
    let jwk = (await this.#load(false)).keys.find((k) => k.kid === kid);
    if (!jwk) jwk = (await this.#load(true)).keys.find((k) => k.kid === kid);
    if (jwk?.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") return null;
    const imported = crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
    this.#imported.set(kid, imported);
    return imported;
  }

  /** The token's claims when Warden signed it for this workspace, environment and tool; else an invalid_token error. */
  async verify(token: string, expected: { workspace: string; env: string; tool: string }): Promise<AccessClaims> {
    const { header, claims, signed, signature } = parseToken(token);
    if (header.alg !== "EdDSA" || typeof header.kid !== "string") throw invalid("The token is not signed with EdDSA under a named key.");
    const key = await this.#key(header.kid);
    if (!key) throw invalid(`Warden's key set has no Ed25519 key "${header.kid}".`);
    if (!(await crypto.subtle.verify({ name: "Ed25519" }, key, signature, signed))) throw invalid("The token's signature does not verify.");
    return checkClaims(claims, expected);
  }
}
